import { createInMemoryStore } from '@baton/core';
import { describeMemoryStoreConformance } from '@baton/core/testing';

describeMemoryStoreConformance('InMemoryStore', ({ limits }) => {
  const store = createInMemoryStore(limits === undefined ? {} : { limits });
  return Promise.resolve({ store, cleanup: () => store.close() });
});
