// Tests of sql/normalize: normalizeSql: case, whitespace, semicolons and comments do not matter; literals do;
// tokenize keeps quoted names and strings whole, even unterminated
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeSql, sqlBigrams, bigramSimilarity, jaccard, tokenize } from '../../../src/core/sql';

test('normalizeSql: case, whitespace, semicolons and comments do not matter; literals do', () => {
  const a = normalizeSql("select  T1.Name ,count(*)\nFROM Singer as t1 -- who\nWHERE x = 'Bob';;");
  assert.equal(a, "SELECT t1.name , count ( * ) FROM singer AS t1 WHERE x = 'Bob'");
  assert.equal(normalizeSql("SELECT t1.name, COUNT ( * ) FROM singer AS T1 /* c */ WHERE x = 'Bob'"), a);
  assert.notEqual(normalizeSql("SELECT 1 WHERE x = 'bob'"), normalizeSql("SELECT 1 WHERE x = 'Bob'"));
  assert.equal(normalizeSql('SELECT "My Col" FROM [t t]'), 'SELECT "My Col" FROM [t t]');
  assert.equal(normalizeSql('SELECT 1.5, a.b.c, x<=y'), 'SELECT 1.5 , a.b.c , x <= y');
});

test('tokenize keeps quoted names and strings whole, even unterminated', () => {
  assert.deepEqual(
    tokenize('SELECT \'it\'\'s\' , "a""b" FROM `x`').map((t) => [t.kind, t.text]),
    [
      ['word', 'SELECT'],
      ['string', "'it''s'"],
      ['punct', ','],
      ['quoted', '"a""b"'],
      ['word', 'FROM'],
      ['quoted', '`x`'],
    ],
  );
  assert.deepEqual(
    tokenize("WHERE a = 'open").map((t) => t.text),
    ['WHERE', 'a', '=', "'open"],
  );
});

test('bigrams: the SQL-Trail App. A.4 example scores 2/4', () => {
  assert.deepEqual([...sqlBigrams('SELECT name FROM student')], ['SELECT name', 'name FROM', 'FROM student']);
  assert.equal(bigramSimilarity('SELECT name FROM teacher', 'SELECT name FROM student'), 0.5);
  assert.equal(bigramSimilarity('select NAME from Student;', 'SELECT name FROM student'), 1);
  assert.equal(jaccard(new Set(), new Set()), 1);
  assert.equal(bigramSimilarity('SELECT', 'SELECT name FROM student'), 0);
});
