// Child process for the crash-safety test: saves labels one after another and says each one's id on stdout once
// save() has returned. The test SIGKILLs it mid-stream and reopens the store.
import { LabelStore } from '../../../src/core/labels/store';

const path = process.argv[2];
if (!path) throw new Error('usage: saveAndDie.js <store path>');
const store = LabelStore.open(path, { labeler: 'child' });
for (let i = 0; ; i++) {
  store.save({
    trajectoryId: `t${i}`,
    file: '/data/run.jsonl',
    recordSha: `sha${i}`,
    verdict: i % 2 === 0 ? 'correct' : 'incorrect',
    correctedSql: i % 3 === 0 ? `SELECT ${i}` : null,
    tags: i % 2 === 0 ? ['loop'] : ['wrong join', 'format'],
    note: `note ${i}`,
  });
  process.stdout.write(`saved t${i}\n`);
}
