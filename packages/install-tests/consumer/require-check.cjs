// A CommonJS consumer: `require` of each library (Node >= 20.19 loads their ES modules).
const core = require('@baton/core');
const storage = require('@baton/storage-redis');
const context = require('@baton/context-config');
const found = [
  typeof core.createMemoryTool,
  typeof storage.createRedisMemoryStore,
  typeof context.defineContextConfig,
];
console.log(found.join(' '));
