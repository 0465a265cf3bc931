// Theme toggle for the legacy report pages (plain JS, loaded by the old wiki embed).
const THEME_KEY = "datapipe.theme";

export function applyTheme(theme) {
  document.documentElement.dataset.theme = theme;
}

export function toggleTheme() {
  const next = document.documentElement.dataset.theme === "dark" ? "light" : "dark";
  applyTheme(next);
  localStorage.setItem(THEME_KEY, next);
  return next;
}

export function restoreTheme() {
  applyTheme(localStorage.getItem(THEME_KEY) ?? "light");
}
