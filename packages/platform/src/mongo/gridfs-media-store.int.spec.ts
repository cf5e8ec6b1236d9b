import type { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe } from 'vitest';
import { describeMediaStore } from '../testing/conformance/media.ts';
import { testMongo, uniqueDatabase } from '../testing/servers/mongo.ts';
import { createGridFsMediaStore } from './gridfs-media-store.ts';
import { connectMongo } from './mongo-document-store.ts';

const mongo = await testMongo();

describe.skipIf(!mongo.url)(`gridfs media store${mongo.url ? ` (${mongo.reason})` : ` (skipped: ${mongo.reason})`}`, () => {
  let client: MongoClient;
  const database = uniqueDatabase();
  beforeAll(() => {
    client = connectMongo(mongo.url!);
  });
  afterAll(async () => {
    await client.db(database).dropDatabase();
    await client.close();
    await mongo.stop();
  });

  // Keys are unique per test, so one database serves the whole suite.
  describeMediaStore('gridfs', () => createGridFsMediaStore({ client, database }));
});
