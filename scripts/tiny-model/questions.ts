// Question templates for the bundled bookshop database, with slot values read from the database itself, so every
// training answer is a query that runs and means what the question asks. Several phrasings per query teach the tiny
// model to map wording to SQL rather than to memorise one sentence.
import type Database from 'better-sqlite3';

export interface QA {
  question: string;
  sql: string;
  /** The reasoning written in the <think> block of the first turn. */
  think: string;
}

/** SQL string literal: doubled single quotes, as SQLite reads them. */
function lit(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

function column(db: Database.Database, sql: string): string[] {
  return (db.prepare(sql).raw().all() as unknown[][]).map((r) => String(r[0]));
}

const JOIN_BOOK_AUTHOR = 'FROM book JOIN author ON book.author_id = author.author_id';
const JOIN_ORDER_CUSTOMER = 'FROM orders JOIN customer ON orders.customer_id = customer.customer_id';

export function bookshopQuestions(db: Database.Database): QA[] {
  const authors = column(db, 'SELECT name FROM author ORDER BY author_id');
  const authorCountries = column(db, 'SELECT DISTINCT country FROM author ORDER BY country');
  const customerCountries = column(db, 'SELECT DISTINCT country FROM customer ORDER BY country');
  const cities = column(db, 'SELECT DISTINCT city FROM customer ORDER BY city');
  const genres = column(db, 'SELECT DISTINCT genre FROM book ORDER BY genre');
  const titles = column(db, 'SELECT title FROM book ORDER BY book_id');
  const customers = column(db, 'SELECT name FROM customer ORDER BY customer_id');
  const statuses = column(db, 'SELECT DISTINCT status FROM orders ORDER BY status');
  const years = [1900, 1930, 1950, 1960, 1970, 1980, 1990, 2000, 2010];
  const out: QA[] = [];
  const add = (questions: string[], sql: string, think: string) => {
    for (const question of questions) out.push({ question, sql, think });
  };

  for (const [table, noun] of [
    ['book', 'books'],
    ['author', 'authors'],
    ['customer', 'customers'],
    ['orders', 'orders'],
  ] as const) {
    add(
      [`How many ${noun} are there?`, `Count the ${noun}.`, `What is the number of ${noun}?`],
      `SELECT COUNT(*) FROM ${table};`,
      `The question asks how many ${noun} there are, so I count the rows of the ${table} table.`,
    );
  }
  for (const a of authors) {
    add(
      [`List the titles of books by ${a}.`, `Which books did ${a} write?`, `What books were written by ${a}?`],
      `SELECT book.title ${JOIN_BOOK_AUTHOR} WHERE author.name = ${lit(a)};`,
      `I need the titles of books by ${a}, so I join book with author and filter on the author name.`,
    );
    add(
      [`How many books did ${a} write?`, `Count the books by ${a}.`],
      `SELECT COUNT(*) ${JOIN_BOOK_AUTHOR} WHERE author.name = ${lit(a)};`,
      `I count the books by ${a}: join book with author and filter on the author name.`,
    );
    add(
      [`Which country is ${a} from?`, `What country does ${a} come from?`],
      `SELECT country FROM author WHERE name = ${lit(a)};`,
      `The country of an author is in the author table, so I filter on the name.`,
    );
  }
  for (const c of authorCountries) {
    add(
      [`Which authors are from ${c}?`, `List the names of authors from ${c}.`],
      `SELECT name FROM author WHERE country = ${lit(c)};`,
      `Authors have a country column, so I select the names of authors whose country is ${c}.`,
    );
  }
  for (const c of customerCountries) {
    add(
      [`How many customers are from ${c}?`, `Count the customers in ${c}.`],
      `SELECT COUNT(*) FROM customer WHERE country = ${lit(c)};`,
      `I count the customers whose country is ${c}.`,
    );
  }
  for (const city of cities) {
    add(
      [`Which customers live in ${city}?`, `List the names of customers in ${city}.`],
      `SELECT name FROM customer WHERE city = ${lit(city)};`,
      `Customers have a city column, so I select the names of customers whose city is ${city}.`,
    );
  }
  for (const g of genres) {
    add(
      [`List the titles of ${g} books.`, `Which books are in the ${g} genre?`],
      `SELECT title FROM book WHERE genre = ${lit(g)};`,
      `The genre is a column of book, so I select the titles where genre is ${g}.`,
    );
    add(
      [`What is the average price of ${g} books?`, `What do ${g} books cost on average?`],
      `SELECT AVG(price) FROM book WHERE genre = ${lit(g)};`,
      `I average the price of the books whose genre is ${g}.`,
    );
    add(
      [`How many ${g} books are there?`],
      `SELECT COUNT(*) FROM book WHERE genre = ${lit(g)};`,
      `I count the books whose genre is ${g}.`,
    );
  }
  for (const t of titles) {
    add(
      [`Who wrote ${t}?`, `Who is the author of ${t}?`],
      `SELECT author.name ${JOIN_BOOK_AUTHOR} WHERE book.title = ${lit(t)};`,
      `The author of a book is found by joining book with author on author_id and filtering on the title.`,
    );
    add(
      [`What is the price of ${t}?`, `How much does ${t} cost?`],
      `SELECT price FROM book WHERE title = ${lit(t)};`,
      `The price is a column of book, so I filter on the title.`,
    );
    add(
      [`When was ${t} published?`],
      `SELECT year_published FROM book WHERE title = ${lit(t)};`,
      `The publication year is the year_published column of book.`,
    );
  }
  for (const y of years) {
    add(
      [`Which books were published after ${y}?`, `List the titles of books published after ${y}.`],
      `SELECT title FROM book WHERE year_published > ${y};`,
      `I select the titles of books whose year_published is greater than ${y}.`,
    );
    add(
      [`Which authors were born before ${y}?`],
      `SELECT name FROM author WHERE birth_year < ${y};`,
      `I select the names of authors whose birth_year is less than ${y}.`,
    );
  }
  for (const s of statuses) {
    add(
      [`How many orders are ${s}?`, `How many orders have the status ${s}?`],
      `SELECT COUNT(*) FROM orders WHERE status = ${lit(s)};`,
      `I count the orders whose status is ${s}.`,
    );
  }
  for (const n of customers) {
    add(
      [`How many orders did ${n} place?`],
      `SELECT COUNT(*) ${JOIN_ORDER_CUSTOMER} WHERE customer.name = ${lit(n)};`,
      `I join orders with customer and count the orders of ${n}.`,
    );
  }
  add(
    ['What is the most expensive book?', 'Which book has the highest price?'],
    'SELECT title FROM book ORDER BY price DESC LIMIT 1;',
    'I sort the books by price in descending order and take the first title.',
  );
  add(
    ['What is the cheapest book?', 'Which book has the lowest price?'],
    'SELECT title FROM book ORDER BY price ASC LIMIT 1;',
    'I sort the books by price in ascending order and take the first title.',
  );
  add(
    ['Who is the oldest author?', 'Which author was born first?'],
    'SELECT name FROM author ORDER BY birth_year ASC LIMIT 1;',
    'The oldest author has the smallest birth_year, so I sort by it and take the first name.',
  );
  add(
    ['How many books are there in each genre?', 'Count the books per genre.'],
    'SELECT genre, COUNT(*) FROM book GROUP BY genre;',
    'I group the books by genre and count each group.',
  );
  add(
    ['Which author wrote the most books?', 'Who has written the most books?'],
    `SELECT author.name ${JOIN_BOOK_AUTHOR} GROUP BY author.author_id ORDER BY COUNT(*) DESC LIMIT 1;`,
    'I join book with author, group by author, and take the author with the largest count.',
  );
  add(
    ['Which customer placed the most orders?', 'Who placed the most orders?'],
    `SELECT customer.name ${JOIN_ORDER_CUSTOMER} GROUP BY customer.customer_id ORDER BY COUNT(*) DESC LIMIT 1;`,
    'I join orders with customer, group by customer, and take the one with the most orders.',
  );
  add(
    ['What is the total revenue of all orders?', 'How much money did all orders bring in?'],
    'SELECT SUM(quantity * unit_price) FROM order_item;',
    'Revenue is quantity times unit_price summed over order_item.',
  );
  add(
    ['Which countries do the authors come from?', 'List the distinct countries of authors.'],
    'SELECT DISTINCT country FROM author;',
    'I select the distinct values of the country column of author.',
  );
  add(
    ['What is the average book price?', 'What do books cost on average?'],
    'SELECT AVG(price) FROM book;',
    'I average the price column of book.',
  );
  return out;
}
