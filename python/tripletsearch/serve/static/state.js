// The page's state, in one object, and what survives a reload (localStorage).

/** "search" (the free search), "study" or "collect" (their participants): set by the server. */
export const page = document.body.dataset.page;

const STORE = `ts-${page}`; // ts-search, ts-study, ts-collect

export const state = {
  session: null,     // the session shown: {id, token, mode}
  renderer: null,    // its mode's renderer (modes/index.js)
  memory: {},        // what the renderer keeps across the session's screens
  finished: null,    // what follows when the session ends
  screen: null,      // the screen shown
  nQueries: 0,       // answers that count
  busy: false,       // a request is under way
  said: "",          // what the next screen's announcement begins with
  sender: null,      // how the session's answers are sent (session.js begin)
  undoer: null,      // how its undos are sent (session.js begin)
  reply: null,       // participants: the last answer's reply (what follows a part's end)
  shownAt: 0,        // when the screen shown appeared (performance.now())
  participant: null, // participants: {id, token}
  slot: null,        // participants: their part {slot, n_slots, target (or null)}
  showNames: true,   // names under the items (the experiment's show_names)
  maxQueries: 0,     // participants: their screens, when the experiment says (the header counts them)
};

/** Keep the session and the participant for a reload. */
export function save() {
  localStorage.setItem(STORE, JSON.stringify({session: state.session, participant: state.participant}));
}

/** What the last page load kept: {session, participant}, or null. */
export function saved() {
  try {
    return JSON.parse(localStorage.getItem(STORE) || "null");
  } catch (e) {
    return null;
  }
}

/** Forget what was kept: the next load starts afresh. */
export function forget() {
  localStorage.removeItem(STORE);
}
