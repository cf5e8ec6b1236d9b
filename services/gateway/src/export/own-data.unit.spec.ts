import { describe, expect, it } from 'vitest';
import { csvCell, csvRow } from './own-data.ts';

describe('CSV cells of the export', () => {
  it('quotes text and doubles its quotes, keeping commas and line breaks inside the cell', () => {
    expect(csvRow(['a, "b"', 'two\nlines'])).toBe('"a, ""b""","two\nlines"\r\n');
  });

  it('prefixes text a spreadsheet would run as a formula with an apostrophe', () => {
    for (const text of ['=SUM(A1)', '+1', '-2+3', '@cmd', '\tx', '\r=1']) expect(csvCell(text)).toBe(`"'${text}"`);
    expect(csvCell('a=1')).toBe('"a=1"');
  });

  it('writes numbers and booleans bare and null as an empty cell', () => {
    expect(csvRow([-5, 12, true, null, undefined])).toBe('-5,12,true,,\r\n');
  });
});
