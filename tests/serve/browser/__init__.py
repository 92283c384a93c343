"""The page in a real browser (chromium driven by Playwright), page by page."""
