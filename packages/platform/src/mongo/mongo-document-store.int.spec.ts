import type { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe } from 'vitest';
// Relative imports: @castie/testing depends on @castie/platform, so the reverse would be a cycle.
import { describeDocumentStore } from '../../../testing/src/conformance/document-store.ts';
import { testMongo, uniqueDatabase } from '../../../testing/src/servers/mongo.ts';
import { connectMongo, createMongoDocumentStore } from './mongo-document-store.ts';

const mongo = await testMongo();

describe.skipIf(!mongo.url)(`mongo document store${mongo.url ? ` (${mongo.reason})` : ` (skipped: ${mongo.reason})`}`, () => {
  let client: MongoClient;
  beforeAll(() => {
    client = connectMongo(mongo.url!);
  });
  afterAll(async () => {
    await client.close();
    await mongo.stop();
  });

  describeDocumentStore('mongodb', () => {
    // A database per test, dropped when the suite closes the store.
    const store = createMongoDocumentStore({ client, database: uniqueDatabase() });
    return {
      ...store,
      close: async () => {
        await store.dropAll();
        await store.close();
      },
    };
  });
});
