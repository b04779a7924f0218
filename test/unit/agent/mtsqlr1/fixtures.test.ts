// The model turns quoted in MTSQL-R1 App. D parse as expected (expected.json), and App. D.1's whole episode driven by
// hand through one session gives the paper's MDP label sequence, tool messages and final SQL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseTurn, type Mtsqlr1Action } from '../../../../src/core/agent/protocols/mtsqlr1';
import { D1_GOLD, d1Session, d1Task, expectedCases, okResult, turnText } from './support';

test('App. D turns parse to the expected action, SQL, MDP labels and problems', () => {
  const cases = expectedCases();
  assert.equal(cases.length, 8);
  for (const c of cases) {
    const a = parseTurn(turnText(c.file), { ...c.state, hasHistory: true }) as Mtsqlr1Action;
    assert.equal(a.kind, c.kind, c.file);
    assert.equal(a.sql, c.sql, c.file);
    assert.equal(a.tool, c.tool, c.file);
    assert.deepEqual(a.mdp, c.mdp, c.file);
    assert.equal(a.verify, undefined, `${c.file}: App. D's model writes no verdict tag`);
    assert.equal(a.problems.length, c.problems.length, `${c.file}: ${JSON.stringify(a.problems)}`);
    c.problems.forEach((p, i) =>
      assert.ok(a.problems[i].includes(p), `${c.file}: "${a.problems[i]}" should contain "${p}"`),
    );
    assert.ok(a.thought?.startsWith('Okay,'), `${c.file}: the <think> text is the thought`);
  }
});

test('App. D.1 by hand: PROPOSE/EXECUTE, E-VERIFY/SELF-CORRECT/EXECUTE, E-VERIFY/M-VERIFY, M-VERIFY/FINALIZE', () => {
  const s = d1Session();
  const labels: string[][] = [];
  const step = (file: string, result: ReturnType<typeof okResult> | null, turnsLeft: number) => {
    const a = s.parse(turnText(file));
    labels.push(a.mdp);
    return { a, r: s.respond(a, a.kind === 'execute' ? result : null, turnsLeft) };
  };

  const t1 = step('d1-ours-turn1.txt', okResult(['COUNT(*)'], [[0]]), 3);
  assert.equal(t1.r.done, false);
  assert.equal(t1.r.observations.length, 1);
  const recap1 = t1.r.observations[0];
  assert.equal(recap1.role, 'user');
  assert.ok(
    recap1.content.startsWith(
      '<tool_response>\nRecap:\n- Current question: Question: What about the number of car makers in the ' +
        'country USA?\n' +
        '- Generated SQL: SELECT COUNT(*) FROM car_makers JOIN countries ON car_makers.Country = ' +
        "countries.CountryId WHERE countries.CountryName = 'USA';\n" +
        '- SQL execution results (truncated to 200 characters): The sql results example is: [(0,)]\n\nNow please:\n',
    ),
    recap1.content,
  );
  assert.ok(
    recap1.content.endsWith(
      "4. If <exec_verify>pass</exec_verify>, You have to call 'memory_retrieve' tool via <tool_call> at " +
        'least once to ensure the current generated SQL is coherent with the historical ' +
        'memory.\n</tool_response>',
    ),
  );

  const t2 = step('d1-ours-turn2.txt', okResult(['COUNT(*)'], [[4]]), 2);
  assert.match(
    t2.r.observations[0].content,
    new RegExp(
      /WHERE countries\.CountryName = 'usa';\n- SQL execution results \(truncated to 200 characters/.source +
        /\): The sql results example is: \[\(4,\)\]\n/.source,
    ),
  );

  const t3 = step('d1-ours-turn3.txt', null, 1);
  const memory = t3.r.observations[0].content;
  assert.ok(
    memory.startsWith(
      '<tool_response>\nYou are a coherence verifier for Multi-turn Text2SQL.\n\nCurrent Question: ' +
        'Question: What about the number of car makers in the country USA?\n' +
        'Proposed SQL: SELECT COUNT(*) FROM car_makers JOIN countries ON car_makers.Country = ' +
        "countries.CountryId WHERE countries.CountryName = 'usa';\n" +
        'The execution results of the proposed SQL: The sql results example is: [(4,)]\n\nMemory ' +
        '(historical information in order):\n== Turn 0 ==\n' +
        'Question: Question: Can you list the number of car makers on each continent?\n' +
        `Ground-Truth SQL: ${D1_GOLD}\n` +
        "Parsed Elements for each term: {'from': {'table_units': [('table_unit', '__continents__'), " +
        "('table_unit', '__countries__'), ('table_unit', '__car_makers__')], " +
        "'conds': [(False, 2, (0, (0, '__continents.contid__', False), None), (0, " +
        "'__countries.continent__', False), None), 'and', " +
        "(False, 2, (0, (0, '__countries.countryid__', False), None), (0, '__car_makers.country__', " +
        "False), None)]}, 'select': ['__continents.continent__', '__all__'], " +
        "'where': [], 'groupBy': [(0, '__continents.continent__', False)], 'having': [], 'orderBy': [], " +
        "'limit': None, 'intersect': None, 'union': None, 'except': None}\n" +
        'SQL Results (truncated to 50 characters): (not available: this SQL was not run)\n== Turn 0 ' +
        '==\n\nYour tasks:\n',
    ),
    memory,
  );
  assert.ok(
    memory.endsWith(
      "Note finally you should return the final SQL inside '<answer_sql>...</answer_sql>\n</tool_response>",
    ),
  );

  const t4 = step('d1-ours-turn4.txt', null, 0);
  assert.deepEqual(t4.r, {
    observations: [],
    done: true,
    end: 'answer',
    finalSql:
      'SELECT COUNT(*) FROM car_makers JOIN countries ON car_makers.Country = countries.CountryId WHERE ' +
      "countries.CountryName = 'usa';",
  });
  assert.deepEqual(labels, [
    ['PROPOSE', 'EXECUTE'],
    ['E-VERIFY', 'SELF-CORRECT', 'EXECUTE'],
    ['E-VERIFY', 'M-VERIFY'],
    ['M-VERIFY', 'FINALIZE'],
  ]);
});

test("the memory shows the earlier turn's results when the history carries them (App. D.1's memory text)", () => {
  const s = d1Session();
  const withResult = d1Session({
    ...d1Task(),
    history: [
      {
        question: 'Can you list the number of car makers on each continent?',
        sql: D1_GOLD,
        result: "[('america', 4), ('asia', 7), ('europe', 11)]",
      },
    ],
  });
  assert.match(
    withResult.memory(),
    new RegExp(
      /\nSQL Results \(truncated to 50 characters\): \[\('america', 4\), \('asia', 7\), \('europe',/.source +
        / 11\)\]\n== Turn 0 ==$/.source,
    ),
  );
  assert.match(s.memory(), /not available/);
});
