import { resolve } from 'node:path';

/** Where `npm run build:web` writes the client (the same from src/ under Jest and from dist/ compiled). */
export const WEB_CLIENT_DIR = resolve(__dirname, '..', '..', 'web', 'dist');
