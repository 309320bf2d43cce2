import { expect } from 'chai';
import { chunkBySize } from '../../src/lib/chunks.js';

describe('chunkBySize', () => {
  it('keeps each chunk under the budget, in order, and gives an oversized item its own chunk', () => {
    const sizes = [3, 3, 3, 10, 1, 1];
    const chunks = chunkBySize(sizes, (n) => n, 6);
    expect(chunks).to.deep.equal([[3, 3], [3], [10], [1, 1]]);
    expect(chunkBySize([], (n: number) => n, 6)).to.deep.equal([]);
  });
});
