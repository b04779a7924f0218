// Syntax highlighting for SQL shown in webviews: keywords, strings and numbers get theme-coloured spans. Built as DOM
// nodes (never innerHTML), so model-written SQL cannot inject markup.
const KEYWORDS = new Set(
  (
    'select from where group by order having limit offset join inner left right outer cross on as and or not ' +
    'in is null like between case when then else end distinct union all intersect except with asc desc ' +
    'count sum avg min max ' +
    'exists cast pragma values insert update delete create table'
  ).split(' '),
);

export function highlightSql(sql: string): HTMLElement {
  const pre = document.createElement('pre');
  pre.className = 'q-sql';
  const re = /('(?:[^']|'')*'?)|("(?:[^"]|"")*"?)|(\b\d+(?:\.\d+)?\b)|([A-Za-z_][A-Za-z0-9_]*)|(\s+|.)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(sql)) !== null) {
    const [text, str, , num, word] = m;
    let cls: string | null = null;
    if (str !== undefined) cls = 'q-str';
    else if (num !== undefined) cls = 'q-num';
    else if (word !== undefined && KEYWORDS.has(word.toLowerCase())) cls = 'q-kw';
    if (cls) {
      const span = document.createElement('span');
      span.className = cls;
      span.textContent = text;
      pre.append(span);
    } else {
      pre.append(text);
    }
  }
  return pre;
}
