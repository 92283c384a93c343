-- The SQLite schema of tripletsearch.serve version 1 (tripletsearch 0.1.0, issue 11),
-- dumped from a database it created: the migration test upgrades such a database.
CREATE TABLE ts_meta (
	"key" VARCHAR(64) NOT NULL, 
	value TEXT NOT NULL, 
	PRIMARY KEY ("key")
);
CREATE TABLE ts_sessions (
	id VARCHAR(64) NOT NULL, 
	token_hash VARCHAR(64) NOT NULL, 
	mode VARCHAR(16) NOT NULL, 
	k INTEGER NOT NULL, 
	seed VARCHAR(32) NOT NULL, 
	params TEXT NOT NULL, 
	catalogue VARCHAR(64) NOT NULL, 
	library VARCHAR(32) NOT NULL, 
	created FLOAT NOT NULL, 
	updated FLOAT NOT NULL, 
	queries INTEGER NOT NULL, 
	done BOOLEAN NOT NULL, 
	result TEXT, 
	PRIMARY KEY (id)
);
CREATE TABLE ts_screens (
	session_id VARCHAR(64) NOT NULL, 
	number INTEGER NOT NULL, 
	payload TEXT NOT NULL, 
	"query" TEXT NOT NULL, 
	shown_at FLOAT NOT NULL, 
	PRIMARY KEY (session_id, number), 
	FOREIGN KEY(session_id) REFERENCES ts_sessions (id)
);
CREATE TABLE ts_answers (
	session_id VARCHAR(64) NOT NULL, 
	screen INTEGER NOT NULL, 
	choice INTEGER, 
	found BOOLEAN NOT NULL, 
	reply TEXT NOT NULL, 
	answered_at FLOAT NOT NULL, 
	PRIMARY KEY (session_id, screen), 
	FOREIGN KEY(session_id) REFERENCES ts_sessions (id)
);
INSERT INTO ts_meta VALUES ('schema_version', '1');
