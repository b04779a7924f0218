-- Orchards and their harvests, made up for Quarry's editor tests.
CREATE TABLE orchard (
  orchard_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  region TEXT NOT NULL,
  hectares REAL
);
CREATE TABLE tree (
  tree_id INTEGER PRIMARY KEY,
  orchard_id INTEGER NOT NULL REFERENCES orchard(orchard_id),
  variety TEXT NOT NULL,
  planted INTEGER
);
CREATE TABLE harvest (
  tree_id INTEGER NOT NULL REFERENCES tree(tree_id),
  year INTEGER NOT NULL,
  kilograms REAL NOT NULL,
  PRIMARY KEY (tree_id, year)
);
INSERT INTO orchard VALUES (1, 'Hillside', 'Alto Adige', 12.5), (2, 'River Bend', 'Normandy', 8.0);
INSERT INTO tree VALUES (1, 1, 'Gala', 2010), (2, 1, 'Fuji', 2012), (3, 2, 'Calvados Red', 2005), (4, 2, 'Gala', 2016);
INSERT INTO harvest VALUES (1, 2022, 310.5), (1, 2023, 298.0), (2, 2023, 251.25), (3, 2022, 402.0), (3, 2023, 388.5),
  (4, 2023, 120.0);
