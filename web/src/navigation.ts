/**
 * Client-side routes by path (the service answers index.html for every non-API path): wouter reads the
 * address (App.tsx's routes, useRoute, useLocation); `navigate` changes it from outside a component.
 */
export { navigate } from 'wouter/use-browser-location';
