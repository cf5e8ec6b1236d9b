import type { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe } from 'vitest';
import { describeDocumentStore } from '../testing/conformance/document-store.ts';
import { testMongo, uniqueDatabase } from '../testing/servers/mongo.ts';
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
    const database = uniqueDatabase();
    const store = createMongoDocumentStore({ client, database });
    return {
      ...store,
      close: async () => {
        await client.db(database).dropDatabase();
        await store.close();
      },
    };
  });
});
