// A screen's item as a card: its pick button and its name under it (the modes' screens).

/** The card of `item` holding its button `pick`. */
export function card(item, pick) {
  const c = document.createElement("div");
  c.className = "card";
  const label = document.createElement("span");
  label.className = "name";
  label.textContent = item.name;
  c.append(pick, label);
  return c;
}
