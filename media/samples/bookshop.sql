-- Quarry's bundled sample database: a small bookshop. Made up by the project; no third-party data.
PRAGMA foreign_keys = ON;
CREATE TABLE author (
  author_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  country TEXT,
  birth_year INTEGER
);
CREATE TABLE book (
  book_id INTEGER PRIMARY KEY,
  title TEXT NOT NULL,
  author_id INTEGER NOT NULL REFERENCES author(author_id),
  year_published INTEGER,
  genre TEXT,
  price REAL
);
CREATE TABLE customer (
  customer_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  city TEXT,
  country TEXT,
  joined_on TEXT
);
CREATE TABLE orders (
  order_id INTEGER PRIMARY KEY,
  customer_id INTEGER NOT NULL REFERENCES customer(customer_id),
  ordered_on TEXT NOT NULL,
  status TEXT CHECK (status IN ('placed', 'shipped', 'delivered', 'returned'))
);
CREATE TABLE order_item (
  order_id INTEGER NOT NULL REFERENCES orders(order_id),
  book_id INTEGER NOT NULL REFERENCES book(book_id),
  quantity INTEGER NOT NULL DEFAULT 1,
  unit_price REAL NOT NULL,
  PRIMARY KEY (order_id, book_id)
);
INSERT INTO author VALUES (1, 'Chinua Achebe', 'Nigeria', 1930);
INSERT INTO author VALUES (2, 'Margaret Atwood', 'Canada', 1939);
INSERT INTO author VALUES (3, 'Jorge Luis Borges', 'Argentina', 1899);
INSERT INTO author VALUES (4, 'Italo Calvino', 'Italy', 1923);
INSERT INTO author VALUES (5, 'Ted Chiang', 'United States', 1967);
INSERT INTO author VALUES (6, 'Clarice Lispector', 'Brazil', 1920);
INSERT INTO author VALUES (7, 'Haruki Murakami', 'Japan', 1949);
INSERT INTO author VALUES (8, 'Toni Morrison', 'United States', 1931);
INSERT INTO author VALUES (9, 'Olga Tokarczuk', 'Poland', 1962);
INSERT INTO author VALUES (10, 'Ursula K. Le Guin', 'United States', 1929);
INSERT INTO author VALUES (11, 'Wisława Szymborska', 'Poland', 1923);
INSERT INTO author VALUES (12, 'Naguib Mahfouz', 'Egypt', 1911);
INSERT INTO book VALUES (1, 'Things Fall Apart', 1, 1958, 'Fiction', 12.5);
INSERT INTO book VALUES (2, 'Arrow of God', 1, 1964, 'Fiction', 14.0);
INSERT INTO book VALUES (3, 'The Handmaid''s Tale', 2, 1985, 'Fiction', 15.99);
INSERT INTO book VALUES (4, 'Oryx and Crake', 2, 2003, 'Science Fiction', 16.5);
INSERT INTO book VALUES (5, 'Ficciones', 3, 1944, 'Short Stories', 11.0);
INSERT INTO book VALUES (6, 'The Aleph', 3, 1949, 'Short Stories', 10.5);
INSERT INTO book VALUES (7, 'Invisible Cities', 4, 1972, 'Fiction', 13.25);
INSERT INTO book VALUES (8, 'If on a winter''s night a traveler', 4, 1979, 'Fiction', 14.75);
INSERT INTO book VALUES (9, 'Stories of Your Life and Others', 5, 2002, 'Science Fiction', 17.0);
INSERT INTO book VALUES (10, 'Exhalation', 5, 2019, 'Science Fiction', 18.5);
INSERT INTO book VALUES (11, 'The Hour of the Star', 6, 1977, 'Fiction', 9.99);
INSERT INTO book VALUES (12, 'Norwegian Wood', 7, 1987, 'Fiction', 13.0);
INSERT INTO book VALUES (13, 'Kafka on the Shore', 7, 2002, 'Fiction', 15.0);
INSERT INTO book VALUES (14, 'Beloved', 8, 1987, 'Fiction', 14.5);
INSERT INTO book VALUES (15, 'Song of Solomon', 8, 1977, 'Fiction', 13.5);
INSERT INTO book VALUES (16, 'Flights', 9, 2007, 'Fiction', 16.0);
INSERT INTO book VALUES (17, 'A Wizard of Earthsea', 10, 1968, 'Fantasy', 11.5);
INSERT INTO book VALUES (18, 'The Left Hand of Darkness', 10, 1969, 'Science Fiction', 12.75);
INSERT INTO book VALUES (19, 'The Dispossessed', 10, 1974, 'Science Fiction', 13.75);
INSERT INTO book VALUES (20, 'View with a Grain of Sand', 11, 1995, 'Poetry', 10.0);
INSERT INTO book VALUES (21, 'Palace Walk', 12, 1956, 'Fiction', 15.25);
INSERT INTO customer VALUES (1, 'Ana', 'Chicago', 'United States', '2024-03-13');
INSERT INTO customer VALUES (2, 'Bo', 'Lisbon', 'Portugal', '2024-02-27');
INSERT INTO customer VALUES (3, 'Chidi', 'Lagos', 'Nigeria', '2024-06-19');
INSERT INTO customer VALUES (4, 'Dana', 'Lisbon', 'Portugal', '2024-09-07');
INSERT INTO customer VALUES (5, 'Eli', 'Lisbon', 'Portugal', '2024-02-14');
INSERT INTO customer VALUES (6, 'Fatima', 'Porto Alegre', 'Brazil', '2024-02-08');
INSERT INTO customer VALUES (7, 'Goro', 'Lagos', 'Nigeria', '2024-09-14');
INSERT INTO customer VALUES (8, 'Hana', 'Lisbon', 'Portugal', '2024-10-04');
INSERT INTO customer VALUES (9, 'Ivo', 'Osaka', 'Japan', '2024-11-21');
INSERT INTO customer VALUES (10, 'Jin', 'Lisbon', 'Portugal', '2024-10-19');
INSERT INTO customer VALUES (11, 'Kasia', 'Porto Alegre', 'Brazil', '2024-01-08');
INSERT INTO customer VALUES (12, 'Luis', 'Lisbon', 'Portugal', '2024-09-28');
INSERT INTO customer VALUES (13, 'Mia', 'Toronto', 'Canada', '2024-05-14');
INSERT INTO customer VALUES (14, 'Noor', 'Toronto', 'Canada', '2024-09-04');
INSERT INTO customer VALUES (15, 'Omar', 'Kraków', 'Poland', '2024-09-27');
INSERT INTO customer VALUES (16, 'Pia', 'Toronto', 'Canada', '2024-02-19');
INSERT INTO customer VALUES (17, 'Quinn', 'Osaka', 'Japan', '2024-06-04');
INSERT INTO customer VALUES (18, 'Rafa', 'Lagos', 'Nigeria', '2024-10-02');
INSERT INTO customer VALUES (19, 'Sara', 'Osaka', 'Japan', '2024-08-22');
INSERT INTO customer VALUES (20, 'Tomás', 'Porto Alegre', 'Brazil', '2024-06-15');
INSERT INTO orders VALUES (1, 12, '2025-01-08', 'delivered');
INSERT INTO order_item VALUES (1, 8, 1, 14.75);
INSERT INTO orders VALUES (2, 19, '2025-01-17', 'delivered');
INSERT INTO order_item VALUES (2, 11, 2, 9.99);
INSERT INTO order_item VALUES (2, 15, 3, 13.5);
INSERT INTO orders VALUES (3, 3, '2025-01-17', 'placed');
INSERT INTO order_item VALUES (3, 6, 1, 10.5);
INSERT INTO order_item VALUES (3, 11, 2, 9.99);
INSERT INTO orders VALUES (4, 14, '2025-01-22', 'placed');
INSERT INTO order_item VALUES (4, 18, 3, 12.75);
INSERT INTO orders VALUES (5, 11, '2025-01-23', 'delivered');
INSERT INTO order_item VALUES (5, 20, 3, 10.0);
INSERT INTO order_item VALUES (5, 16, 2, 16.0);
INSERT INTO orders VALUES (6, 3, '2025-02-16', 'delivered');
INSERT INTO order_item VALUES (6, 3, 3, 15.99);
INSERT INTO order_item VALUES (6, 2, 3, 14.0);
INSERT INTO order_item VALUES (6, 10, 3, 18.5);
INSERT INTO orders VALUES (7, 15, '2025-02-23', 'delivered');
INSERT INTO order_item VALUES (7, 12, 2, 13.0);
INSERT INTO order_item VALUES (7, 1, 2, 12.5);
INSERT INTO orders VALUES (8, 20, '2025-03-16', 'placed');
INSERT INTO order_item VALUES (8, 7, 2, 13.25);
INSERT INTO orders VALUES (9, 5, '2025-03-08', 'returned');
INSERT INTO order_item VALUES (9, 13, 1, 15.0);
INSERT INTO order_item VALUES (9, 16, 1, 16.0);
INSERT INTO orders VALUES (10, 15, '2025-03-18', 'delivered');
INSERT INTO order_item VALUES (10, 5, 3, 11.0);
INSERT INTO order_item VALUES (10, 14, 2, 14.5);
INSERT INTO orders VALUES (11, 12, '2025-04-13', 'returned');
INSERT INTO order_item VALUES (11, 5, 1, 11.0);
INSERT INTO orders VALUES (12, 6, '2025-04-08', 'shipped');
INSERT INTO order_item VALUES (12, 8, 3, 14.75);
INSERT INTO order_item VALUES (12, 1, 1, 12.5);
INSERT INTO order_item VALUES (12, 16, 2, 16.0);
INSERT INTO orders VALUES (13, 10, '2025-04-05', 'placed');
INSERT INTO order_item VALUES (13, 18, 3, 12.75);
INSERT INTO order_item VALUES (13, 12, 3, 13.0);
INSERT INTO orders VALUES (14, 11, '2025-04-23', 'shipped');
INSERT INTO order_item VALUES (14, 20, 3, 10.0);
INSERT INTO order_item VALUES (14, 2, 3, 14.0);
INSERT INTO order_item VALUES (14, 15, 2, 13.5);
INSERT INTO orders VALUES (15, 13, '2025-04-13', 'delivered');
INSERT INTO order_item VALUES (15, 16, 3, 16.0);
INSERT INTO orders VALUES (16, 2, '2025-05-03', 'shipped');
INSERT INTO order_item VALUES (16, 15, 1, 13.5);
INSERT INTO orders VALUES (17, 4, '2025-05-20', 'delivered');
INSERT INTO order_item VALUES (17, 4, 1, 16.5);
INSERT INTO orders VALUES (18, 19, '2025-05-18', 'shipped');
INSERT INTO order_item VALUES (18, 12, 3, 13.0);
INSERT INTO orders VALUES (19, 1, '2025-05-28', 'placed');
INSERT INTO order_item VALUES (19, 20, 2, 10.0);
INSERT INTO orders VALUES (20, 5, '2025-05-09', 'returned');
INSERT INTO order_item VALUES (20, 20, 2, 10.0);
INSERT INTO order_item VALUES (20, 12, 1, 13.0);
INSERT INTO orders VALUES (21, 16, '2025-06-16', 'delivered');
INSERT INTO order_item VALUES (21, 10, 1, 18.5);
INSERT INTO order_item VALUES (21, 3, 1, 15.99);
INSERT INTO orders VALUES (22, 11, '2025-06-09', 'returned');
INSERT INTO order_item VALUES (22, 6, 1, 10.5);
INSERT INTO order_item VALUES (22, 17, 1, 11.5);
INSERT INTO orders VALUES (23, 5, '2025-07-18', 'returned');
INSERT INTO order_item VALUES (23, 17, 2, 11.5);
INSERT INTO orders VALUES (24, 3, '2025-07-28', 'returned');
INSERT INTO order_item VALUES (24, 17, 1, 11.5);
INSERT INTO order_item VALUES (24, 12, 2, 13.0);
INSERT INTO orders VALUES (25, 8, '2025-07-18', 'delivered');
INSERT INTO order_item VALUES (25, 11, 1, 9.99);
INSERT INTO order_item VALUES (25, 8, 2, 14.75);
INSERT INTO order_item VALUES (25, 7, 3, 13.25);
INSERT INTO orders VALUES (26, 8, '2025-07-17', 'shipped');
INSERT INTO order_item VALUES (26, 12, 1, 13.0);
INSERT INTO order_item VALUES (26, 1, 2, 12.5);
INSERT INTO orders VALUES (27, 9, '2025-08-23', 'shipped');
INSERT INTO order_item VALUES (27, 12, 2, 13.0);
INSERT INTO order_item VALUES (27, 15, 1, 13.5);
INSERT INTO order_item VALUES (27, 21, 1, 15.25);
INSERT INTO orders VALUES (28, 4, '2025-08-16', 'shipped');
INSERT INTO order_item VALUES (28, 11, 1, 9.99);
INSERT INTO orders VALUES (29, 16, '2025-08-20', 'delivered');
INSERT INTO order_item VALUES (29, 16, 3, 16.0);
INSERT INTO orders VALUES (30, 12, '2025-08-03', 'returned');
INSERT INTO order_item VALUES (30, 4, 2, 16.5);
INSERT INTO order_item VALUES (30, 13, 1, 15.0);
INSERT INTO order_item VALUES (30, 7, 2, 13.25);
INSERT INTO orders VALUES (31, 11, '2025-08-26', 'placed');
INSERT INTO order_item VALUES (31, 13, 3, 15.0);
INSERT INTO order_item VALUES (31, 15, 1, 13.5);
INSERT INTO order_item VALUES (31, 21, 3, 15.25);
INSERT INTO orders VALUES (32, 6, '2025-09-01', 'shipped');
INSERT INTO order_item VALUES (32, 19, 2, 13.75);
INSERT INTO orders VALUES (33, 5, '2025-09-27', 'delivered');
INSERT INTO order_item VALUES (33, 16, 3, 16.0);
INSERT INTO order_item VALUES (33, 12, 3, 13.0);
INSERT INTO order_item VALUES (33, 5, 1, 11.0);
INSERT INTO orders VALUES (34, 1, '2025-09-26', 'placed');
INSERT INTO order_item VALUES (34, 21, 3, 15.25);
INSERT INTO order_item VALUES (34, 4, 1, 16.5);
INSERT INTO order_item VALUES (34, 17, 2, 11.5);
INSERT INTO orders VALUES (35, 7, '2025-10-09', 'placed');
INSERT INTO order_item VALUES (35, 10, 3, 18.5);
INSERT INTO orders VALUES (36, 8, '2025-10-11', 'delivered');
INSERT INTO order_item VALUES (36, 18, 1, 12.75);
INSERT INTO order_item VALUES (36, 14, 1, 14.5);
INSERT INTO orders VALUES (37, 12, '2025-10-22', 'delivered');
INSERT INTO order_item VALUES (37, 17, 1, 11.5);
INSERT INTO order_item VALUES (37, 14, 3, 14.5);
INSERT INTO order_item VALUES (37, 21, 1, 15.25);
INSERT INTO orders VALUES (38, 15, '2025-11-20', 'shipped');
INSERT INTO order_item VALUES (38, 5, 1, 11.0);
INSERT INTO orders VALUES (39, 5, '2025-11-20', 'delivered');
INSERT INTO order_item VALUES (39, 4, 2, 16.5);
INSERT INTO order_item VALUES (39, 18, 3, 12.75);
INSERT INTO order_item VALUES (39, 2, 3, 14.0);
INSERT INTO orders VALUES (40, 4, '2025-12-02', 'delivered');
INSERT INTO order_item VALUES (40, 7, 2, 13.25);
INSERT INTO orders VALUES (41, 2, '2025-12-17', 'placed');
INSERT INTO order_item VALUES (41, 18, 1, 12.75);
INSERT INTO order_item VALUES (41, 1, 2, 12.5);
INSERT INTO orders VALUES (42, 11, '2025-12-17', 'delivered');
INSERT INTO order_item VALUES (42, 17, 2, 11.5);
INSERT INTO order_item VALUES (42, 7, 3, 13.25);
INSERT INTO order_item VALUES (42, 9, 3, 17.0);
INSERT INTO orders VALUES (43, 16, '2025-12-08', 'delivered');
INSERT INTO order_item VALUES (43, 17, 1, 11.5);
INSERT INTO order_item VALUES (43, 9, 2, 17.0);
INSERT INTO order_item VALUES (43, 18, 1, 12.75);
INSERT INTO orders VALUES (44, 14, '2025-12-13', 'placed');
INSERT INTO order_item VALUES (44, 11, 3, 9.99);
INSERT INTO order_item VALUES (44, 3, 1, 15.99);
