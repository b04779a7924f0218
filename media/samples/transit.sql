-- Quarry's second sample database: a small city's tram and bus network. Made up by the project; no third-party data.
-- A many-to-many table with an order (line_stop), a composite key, a view, and times as ISO text, so questions need
-- joins, ordering and date arithmetic.
PRAGMA foreign_keys = ON;
CREATE TABLE line (
  line_id INTEGER PRIMARY KEY,
  code TEXT NOT NULL UNIQUE,
  mode TEXT NOT NULL CHECK (mode IN ('tram', 'bus')),
  colour TEXT
);
CREATE TABLE stop (
  stop_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  district TEXT NOT NULL,
  accessible INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE line_stop (
  line_id INTEGER NOT NULL REFERENCES line(line_id),
  seq INTEGER NOT NULL,
  stop_id INTEGER NOT NULL REFERENCES stop(stop_id),
  PRIMARY KEY (line_id, seq)
);
CREATE TABLE vehicle (
  vehicle_id INTEGER PRIMARY KEY,
  mode TEXT NOT NULL CHECK (mode IN ('tram', 'bus')),
  built INTEGER NOT NULL,
  seats INTEGER NOT NULL
);
CREATE TABLE trip (
  trip_id INTEGER PRIMARY KEY,
  line_id INTEGER NOT NULL REFERENCES line(line_id),
  vehicle_id INTEGER NOT NULL REFERENCES vehicle(vehicle_id),
  departs_at TEXT NOT NULL,
  delay_min INTEGER NOT NULL DEFAULT 0,
  passengers INTEGER
);
CREATE INDEX trip_by_line ON trip(line_id, departs_at);
CREATE VIEW late_trips AS SELECT trip_id, line_id, departs_at, delay_min FROM trip WHERE delay_min >= 5;

INSERT INTO line VALUES (1, 'T1', 'tram', 'red'), (2, 'T2', 'tram', 'green'), (3, '14', 'bus', 'blue'), (4, '27', 'bus', NULL);
INSERT INTO stop VALUES
  (1, 'Central Station', 'Centre', 1), (2, 'Market Square', 'Centre', 1), (3, 'University', 'Northgate', 1),
  (4, 'Hospital', 'Northgate', 1), (5, 'River Bridge', 'Riverside', 0), (6, 'Old Mill', 'Riverside', 0),
  (7, 'Harbour', 'Docks', 1), (8, 'Ferry Terminal', 'Docks', 0), (9, 'Airport Road', 'Eastfield', 1),
  (10, 'Stadium', 'Eastfield', 1);
INSERT INTO line_stop VALUES
  (1, 1, 1), (1, 2, 2), (1, 3, 3), (1, 4, 4),
  (2, 1, 7), (2, 2, 5), (2, 3, 2), (2, 4, 1), (2, 5, 10),
  (3, 1, 1), (3, 2, 9), (3, 3, 10),
  (4, 1, 6), (4, 2, 5), (4, 3, 8), (4, 4, 7);
INSERT INTO vehicle VALUES
  (101, 'tram', 2009, 64), (102, 'tram', 2016, 72), (103, 'tram', 2021, 80),
  (201, 'bus', 2012, 38), (202, 'bus', 2018, 42), (203, 'bus', 2023, 44);
INSERT INTO trip VALUES
  (1, 1, 101, '2024-05-06 07:00', 0, 58), (2, 1, 102, '2024-05-06 07:15', 2, 66), (3, 1, 101, '2024-05-06 07:30', 6, 71),
  (4, 2, 103, '2024-05-06 07:05', 0, 40), (5, 2, 103, '2024-05-06 07:35', 11, 77), (6, 3, 201, '2024-05-06 07:10', 1, 30),
  (7, 3, 202, '2024-05-06 07:40', 0, 35), (8, 4, 203, '2024-05-06 07:20', 8, 12), (9, 4, 203, '2024-05-06 08:20', 0, NULL),
  (10, 1, 103, '2024-05-07 07:00', 0, 49), (11, 2, 102, '2024-05-07 07:05', 5, 52), (12, 3, 201, '2024-05-07 07:10', 0, 28),
  (13, 3, 202, '2024-05-07 07:40', 3, 33), (14, 4, 203, '2024-05-07 07:20', 0, 9), (15, 1, 101, '2024-05-07 07:30', 0, 60);
