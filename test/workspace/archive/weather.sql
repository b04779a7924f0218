-- Weather readings, made up for Quarry's editor tests; one folder down and with a view.
CREATE TABLE station (
  station_code TEXT PRIMARY KEY,
  town TEXT NOT NULL,
  elevation_m INTEGER
);
CREATE TABLE reading (
  station_code TEXT NOT NULL REFERENCES station(station_code),
  taken_on TEXT NOT NULL,
  temp_c REAL,
  rain_mm REAL
);
CREATE VIEW wettest AS SELECT station_code, MAX(rain_mm) AS rain_mm FROM reading GROUP BY station_code;
INSERT INTO station VALUES ('GRZ', 'Graz', 353), ('INN', 'Innsbruck', 574);
INSERT INTO reading VALUES ('GRZ', '2024-06-01', 21.5, 0.0), ('GRZ', '2024-06-02', 18.0, 12.4),
  ('INN', '2024-06-01', 17.25, 3.1), ('INN', '2024-06-02', 15.0, 22.8);
