// The remembered colour theme (web/src/theme.ts), applied before the page is first painted: a classic
// script in <head> from this origin, which the Content-Security-Policy allows (inline scripts it refuses).
/* global window, document */
(function applyStoredTheme() {
  try {
    var choice = window.localStorage.getItem('chat.theme');
    if (choice === 'light' || choice === 'dark')
      document.documentElement.dataset.theme = choice;
  } catch {
    // Storage refused (private mode): the system's theme, until the app applies a choice.
  }
})();
