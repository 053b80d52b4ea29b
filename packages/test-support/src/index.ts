export { deletePrefix } from './delete-prefix.js';
export { randomHex } from './random-hex.js';
export { REDIS_URL } from './redis-url.js';
export { waitFor } from './wait-for.js';
