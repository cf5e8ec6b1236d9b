import { describe, expect, it } from 'vitest';
import { EventEnvelopeSchema, peekEnvelope } from './envelope.ts';

const envelope = {
  id: '01a2208c12027738b7df5fb4990e35d7',
  type: 'ForecastPlaced',
  schemaVersion: 2,
  streamId: 'forecast-a74765113fc243c5a931b7c23a9b626a-fabb2630f3d945058845f633514611aa',
  streamVersion: 12,
  occurredAt: '2025-12-06T09:07:46.936Z',
  actor: 'fabb2630f3d945058845f633514611aa',
  data: { type: 'CommentPosted', id: 'not this one', streamVersion: 3 },
};

describe('peekEnvelope', () => {
  it('reads the head of an envelope as the event stores write it, whatever order it was given in', () => {
    const { data, actor, occurredAt, streamVersion, ...rest } = envelope;
    const written = JSON.stringify(EventEnvelopeSchema.parse({ data, actor, streamVersion, occurredAt, ...rest }));
    expect(peekEnvelope(written)).toEqual({ id: envelope.id, type: 'ForecastPlaced', schemaVersion: 2, streamId: envelope.streamId, streamVersion: 12 });
  });

  it('reads nothing from text it cannot read exactly, which is then parsed whole', () => {
    const { type, ...others } = envelope;
    const head = `"id":"${envelope.id}","type":"ForecastPlaced","schemaVersion":2,"streamId":"${envelope.streamId}"`;
    const unread = [
      // Another key order, or a field between.
      JSON.stringify({ type, ...others }),
      `{${head},"actor":"x","streamVersion":1,"data":{}}`,
      // A whole head further on (in the data of a record whose own head is in another order).
      JSON.stringify({ type, ...others, data: { ...envelope, data: {} } }),
      // An escape inside a string: its value is not the text between the quotes.
      `{"id":"a\\"b","type":"ForecastPlaced","schemaVersion":2,"streamId":"s","streamVersion":1,"data":{}}`,
      `{"id":"a\\\\","type":"ForecastPlaced","schemaVersion":2,"streamId":"s","streamVersion":1,"data":{}}`,
      `{"id":"${envelope.id}","type":"Forecast\\u0050laced","schemaVersion":2,"streamId":"s","streamVersion":1,"data":{}}`,
      // A control character, which JSON refuses inside a string.
      `{"id":"a\nb","type":"ForecastPlaced","schemaVersion":2,"streamId":"s","streamVersion":1,"data":{}}`,
      `{"id":"${envelope.id}","type":"Forecast\tPlaced","schemaVersion":2,"streamId":"s","streamVersion":1,"data":{}}`,
      `{"id":"${envelope.id}","type":"ForecastPlaced","schemaVersion":2,"streamId":"s\u0000","streamVersion":1,"data":{}}`,
      // What the schema refuses: empty strings, versions that are not positive integers.
      `{"id":"","type":"ForecastPlaced","schemaVersion":2,"streamId":"s","streamVersion":1,"data":{}}`,
      `{"id":"${envelope.id}","type":"","schemaVersion":2,"streamId":"s","streamVersion":1,"data":{}}`,
      `{"id":"${envelope.id}","type":"ForecastPlaced","schemaVersion":2,"streamId":"","streamVersion":1,"data":{}}`,
      `{"id":"${envelope.id}","type":"ForecastPlaced","schemaVersion":0,"streamId":"s","streamVersion":1,"data":{}}`,
      `{${head},"streamVersion":0,"data":{}}`,
      // Past 15 digits: beyond what a number holds exactly.
      `{${head},"streamVersion":1234567890123456,"data":{}}`,
      `{"id":"${envelope.id}","type":"ForecastPlaced","schemaVersion":1234567890123456,"streamId":"s","streamVersion":1,"data":{}}`,
      `{${head},"streamVersion":1.5,"data":{}}`,
      `{${head},"streamVersion":-1,"data":{}}`,
      `{${head},"streamVersion":1e3,"data":{}}`,
      `{"id":"${envelope.id}","type":"ForecastPlaced","schemaVersion":"2","streamId":"s","streamVersion":1,"data":{}}`,
      // Whitespace, as another writer might put it.
      `{ "id":"${envelope.id}","type":"ForecastPlaced","schemaVersion":2,"streamId":"s","streamVersion":1,"data":{}}`,
      'not JSON',
      '',
    ];
    for (const text of unread) expect(peekEnvelope(text), text).toBeNull();
  });
});
