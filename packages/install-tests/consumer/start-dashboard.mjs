// Starts the dashboard from a production deploy of @baton/dashboard (copied into the deploy's
// folder by production-deploys-start.test.ts): only what that deploy installed can be imported.
import { createBatonControl } from '@baton/projects';
import { createDashboardServer } from './dist/index.js';

const control = createBatonControl({
  url: process.env.REDIS_URL,
  prefix: process.env.BATON_PREFIX,
});
const server = await createDashboardServer({ control, host: '127.0.0.1', port: 0 });
console.log(JSON.stringify({ type: 'ready', url: server.url }));
process.on('SIGTERM', () => {
  void server
    .close()
    .then(() => control.close())
    .then(() => process.exit(0));
});
