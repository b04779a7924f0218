-- A small clinic, made up for Quarry's editor tests.
PRAGMA foreign_keys = ON;
CREATE TABLE doctor (
  doctor_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  specialty TEXT NOT NULL
);
CREATE TABLE patient (
  patient_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  born INTEGER,
  city TEXT
);
CREATE TABLE appointment (
  appointment_id INTEGER PRIMARY KEY,
  doctor_id INTEGER NOT NULL REFERENCES doctor(doctor_id),
  patient_id INTEGER NOT NULL REFERENCES patient(patient_id),
  day TEXT NOT NULL,
  fee REAL
);
INSERT INTO doctor VALUES (1, 'Ines Duarte', 'cardiology'), (2, 'Tomas Berg', 'dermatology'), (3, 'Amara Okafor', 'pediatrics');
INSERT INTO patient VALUES
  (1, 'Lena Fischer', 1984, 'Leipzig'), (2, 'Omar Haddad', 1990, 'Lyon'), (3, 'Yuki Sato', 2015, 'Osaka'),
  (4, 'Pedro Alves', 1972, 'Porto'), (5, 'Mia Novak', 2018, 'Brno');
INSERT INTO appointment VALUES
  (1, 1, 1, '2024-03-01', 120.0), (2, 1, 4, '2024-03-02', 120.0), (3, 2, 2, '2024-03-02', 80.0),
  (4, 3, 3, '2024-03-05', 60.0), (5, 3, 5, '2024-03-05', 60.0), (6, 1, 1, '2024-04-11', 150.0),
  (7, 2, 4, '2024-04-12', 80.0);
