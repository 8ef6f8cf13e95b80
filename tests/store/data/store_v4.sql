-- A results store at schema version 4, written by evalsuite at commit a713536: the version-2
-- store of store_v2.sql opened (so upgraded) by that commit, plus one run_shards row.
-- Dumped with 'sqlite3 store.sqlite .dump'; tests/store/test_migrations.py loads it.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE meta (
	"key" VARCHAR(64) NOT NULL, 
	value TEXT NOT NULL, 
	PRIMARY KEY ("key")
);
INSERT INTO meta VALUES('schema_version','4');
INSERT INTO meta VALUES('written_by','0.1.0');
CREATE TABLE runs (
	run_id VARCHAR(64) NOT NULL, 
	suite VARCHAR(128), 
	version VARCHAR(32), 
	manifest_hash VARCHAR(80), 
	split VARCHAR(16), 
	model VARCHAR(256) NOT NULL, 
	model_args TEXT NOT NULL, 
	epochs INTEGER NOT NULL, 
	seed INTEGER, 
	planned INTEGER NOT NULL, 
	status VARCHAR(16) NOT NULL, 
	valid BOOLEAN, 
	error_rate FLOAT, 
	error_threshold FLOAT NOT NULL, 
	weights TEXT NOT NULL, 
	source VARCHAR(16) NOT NULL, 
	spec TEXT NOT NULL, 
	provenance TEXT NOT NULL, 
	started_at VARCHAR(40) NOT NULL, 
	finished_at VARCHAR(40), content_hash VARCHAR(80), 
	PRIMARY KEY (run_id)
);
INSERT INTO runs VALUES('20261201-113825-6f0377',NULL,NULL,NULL,NULL,'model-a','{}',2,NULL,4,'complete',1,0.0,0.050000000000000002775,'{}','csv','{"columns": {}, "epoch_base": 1, "file": "r.csv"}','{"argv": ["-c", "--root", ".", "ingest", "r.csv", "--format", "csv", "--json"], "git_dirty": null, "git_revision": null, "host": "vm", "packages": {"datasets": "5.2.0", "evalsuite": "0.1.0", "inspect-ai": "0.3.285", "numpy": "2.4.6", "pandas": "3.1.1", "pydantic": "2.14.4", "python": "3.11.7", "scipy": "1.17.1", "sqlalchemy": "2.1.9", "statsmodels": "0.15.0"}, "platform": "Linux-6.18.44-fc-v1045-x86_64-with-glibc2.36", "user": "root"}','2026-12-01T11:38:25.874989+00:00','2026-12-01T11:38:25.874989+00:00','rows-sha256:0ae55a6c0a95386ad31c5ea2e5f2fe8c5d8ce89175e9074d0625b5eb4ffa53c0');
INSERT INTO runs VALUES('20261201-113825-7b9ab2',NULL,NULL,NULL,NULL,'model-b','{}',2,NULL,4,'complete',0,0.25,0.050000000000000002775,'{}','csv','{"columns": {}, "epoch_base": 1, "file": "r.csv"}','{"argv": ["-c", "--root", ".", "ingest", "r.csv", "--format", "csv", "--json"], "git_dirty": null, "git_revision": null, "host": "vm", "packages": {"datasets": "5.2.0", "evalsuite": "0.1.0", "inspect-ai": "0.3.285", "numpy": "2.4.6", "pandas": "3.1.1", "pydantic": "2.14.4", "python": "3.11.7", "scipy": "1.17.1", "sqlalchemy": "2.1.9", "statsmodels": "0.15.0"}, "platform": "Linux-6.18.44-fc-v1045-x86_64-with-glibc2.36", "user": "root"}','2026-12-01T11:38:25.914109+00:00','2026-12-01T11:38:25.914109+00:00','rows-sha256:e2e2208d0a0ca60fbb767bcce25648ada72eb49f792d5caddc778f85aff207fa');
INSERT INTO runs VALUES('20261201-113832-f7ddd3',NULL,NULL,NULL,NULL,'model-c','{}',1,NULL,3,'complete',1,0.0,0.050000000000000002775,'{}','csv','{"columns": {}, "epoch_base": 1, "file": "r2.csv"}','{"argv": ["-c", "--root", ".", "ingest", "r2.csv", "--format", "csv", "--json"], "git_dirty": null, "git_revision": null, "host": "vm", "packages": {"datasets": "5.2.0", "evalsuite": "0.1.0", "inspect-ai": "0.3.285", "numpy": "2.4.6", "pandas": "3.1.1", "pydantic": "2.14.4", "python": "3.11.7", "scipy": "1.17.1", "sqlalchemy": "2.1.9", "statsmodels": "0.15.0"}, "platform": "Linux-6.18.44-fc-v1045-x86_64-with-glibc2.36", "user": "root"}','2026-12-01T11:38:32.715824+00:00','2026-12-01T11:38:32.715824+00:00','rows-sha256:8aee6af971d0d049e9b22e7e286ae8722fe7ea7f44add20c152365fad0d0fe5f');
INSERT INTO runs VALUES('20261101-090000-abc123','support','1.0.0','sha256:1111111111111111111111111111111111111111111111111111111111111111','dev','evalsuite/improved','{}',1,0,2,'complete',1,0.0,0.050000000000000002775,'{"support/billing": 1.0}','evalsuite','{"epochs": 1}','{"git": "x"}','2026-11-01T09:00:00+00:00','2026-11-01T09:05:00+00:00',NULL);
INSERT INTO runs VALUES('20261201-120000-1a2b3c',NULL,NULL,NULL,NULL,'inspect-model','{}',1,NULL,4,'complete',0,0.25,0.050000000000000002775,'{}','inspect','{"eval_id": "EvalId123", "log": "x.eval"}','{}','2026-12-01T12:00:00+00:00',NULL,'rows-sha256:4b14be843ddb1e78759a108977ddefdf985328bda019163547c84b84096226b8');
CREATE TABLE attempts (
	run_id VARCHAR(64) NOT NULL, 
	item_id VARCHAR(256) NOT NULL, 
	epoch INTEGER NOT NULL, 
	item_hash VARCHAR(80), 
	stratum VARCHAR(256) NOT NULL, 
	cluster VARCHAR(256), 
	seed INTEGER, 
	outcome VARCHAR(16) NOT NULL, 
	limit_type VARCHAR(16), 
	score FLOAT, 
	reason TEXT, 
	retries INTEGER NOT NULL, 
	duration_s FLOAT NOT NULL, 
	tokens INTEGER NOT NULL, 
	checks TEXT, 
	recorded_at VARCHAR(40) NOT NULL, 
	CONSTRAINT uq_attempt UNIQUE (run_id, item_id, epoch)
);
INSERT INTO attempts VALUES('20261201-113825-6f0377','q1',1,NULL,'easy',NULL,NULL,'scored',NULL,1.0,'ingested from CSV',0,0.0,0,NULL,'2026-12-01T11:38:25.898927+00:00');
INSERT INTO attempts VALUES('20261201-113825-6f0377','q1',2,NULL,'easy',NULL,NULL,'scored',NULL,0.0,'ingested from CSV',0,0.0,0,NULL,'2026-12-01T11:38:25.898927+00:00');
INSERT INTO attempts VALUES('20261201-113825-6f0377','q2',1,NULL,'hard',NULL,NULL,'scored',NULL,0.5,'ingested from CSV',0,0.0,0,NULL,'2026-12-01T11:38:25.898927+00:00');
INSERT INTO attempts VALUES('20261201-113825-6f0377','q2',2,NULL,'hard',NULL,NULL,'limit','custom',0.0,'ingested from CSV',0,0.0,0,NULL,'2026-12-01T11:38:25.898927+00:00');
INSERT INTO attempts VALUES('20261201-113825-7b9ab2','q1',1,NULL,'easy',NULL,NULL,'scored',NULL,1.0,'ingested from CSV',0,0.0,0,NULL,'2026-12-01T11:38:25.932020+00:00');
INSERT INTO attempts VALUES('20261201-113825-7b9ab2','q1',2,NULL,'easy',NULL,NULL,'scored',NULL,1.0,'ingested from CSV',0,0.0,0,NULL,'2026-12-01T11:38:25.932020+00:00');
INSERT INTO attempts VALUES('20261201-113825-7b9ab2','q2',1,NULL,'hard',NULL,NULL,'harness_error',NULL,NULL,'ingested from CSV',0,0.0,0,NULL,'2026-12-01T11:38:25.932020+00:00');
INSERT INTO attempts VALUES('20261201-113825-7b9ab2','q2',2,NULL,'hard',NULL,NULL,'scored',NULL,1.0,'ingested from CSV',0,0.0,0,NULL,'2026-12-01T11:38:25.932020+00:00');
INSERT INTO attempts VALUES('20261201-113832-f7ddd3','q1',1,NULL,'all',NULL,NULL,'scored',NULL,1.0,'ingested from CSV',0,0.0,0,NULL,'2026-12-01T11:38:32.750493+00:00');
INSERT INTO attempts VALUES('20261201-113832-f7ddd3','q2',1,NULL,'all',NULL,NULL,'scored',NULL,0.0,'ingested from CSV',0,0.0,0,NULL,'2026-12-01T11:38:32.750493+00:00');
INSERT INTO attempts VALUES('20261201-113832-f7ddd3','q3',1,NULL,'all',NULL,NULL,'scored',NULL,1.0,'ingested from CSV',0,0.0,0,NULL,'2026-12-01T11:38:32.750493+00:00');
INSERT INTO attempts VALUES('20261101-090000-abc123','billing-001',1,'sha256:2222222222222222222222222222222222222222222222222222222222222222','support/billing',NULL,12345678901234,'scored',NULL,1.0,'fixed',1,1.25,321,'{"fixed": true}','2026-12-01T11:38:39.209728+00:00');
INSERT INTO attempts VALUES('20261101-090000-abc123','billing-002',1,'sha256:3333333333333333333333333333333333333333333333333333333333333333','support/billing',NULL,42,'harness_error',NULL,NULL,'HarnessFault: x',0,0.0,0,NULL,'2026-12-01T11:38:39.209728+00:00');
INSERT INTO attempts VALUES('20261201-120000-1a2b3c','q0',1,NULL,'all',NULL,NULL,'scored',NULL,0.0,'verifier: ok',0,1.5,0,NULL,'2026-12-01T13:38:52.689465+00:00');
INSERT INTO attempts VALUES('20261201-120000-1a2b3c','q1',1,NULL,'all',NULL,NULL,'scored',NULL,1.0,'verifier: ok',0,1.5,10,NULL,'2026-12-01T13:38:52.689465+00:00');
INSERT INTO attempts VALUES('20261201-120000-1a2b3c','q2',1,NULL,'all',NULL,NULL,'scored',NULL,0.0,'verifier: ok',0,1.5,20,NULL,'2026-12-01T13:38:52.689465+00:00');
INSERT INTO attempts VALUES('20261201-120000-1a2b3c','q3',1,NULL,'all',NULL,NULL,'harness_error',NULL,NULL,'HarnessFault: x',0,0.0,0,NULL,'2026-12-01T13:38:52.689465+00:00');
CREATE TABLE outcomes (
	id INTEGER NOT NULL, 
	model VARCHAR(256) NOT NULL, 
	metric VARCHAR(128) NOT NULL, 
	value FLOAT NOT NULL, 
	se FLOAT, 
	n INTEGER, 
	observed_at VARCHAR(40), 
	source TEXT, 
	fingerprint VARCHAR(80) NOT NULL, 
	recorded_at VARCHAR(40) NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (fingerprint)
);
INSERT INTO outcomes VALUES(1,'model-a','task_success',0.60999999999999998667,NULL,400,'2026-10-01T00:00:00','A/B test','sha256:1e7f69e7056e1a98e729bbd10f82fdb5db9615a274e57750156c36c10458c8aa','2026-12-01T11:38:37.671227+00:00');
INSERT INTO outcomes VALUES(2,'model-b','task_success',0.5500000000000000444,NULL,380,'2026-10-02T00:00:00','A/B test','sha256:f7fa6c298de1dae4996191219c83d469c5d34cdd90c43401f46d8f19c9dc33d5','2026-12-01T11:38:37.671227+00:00');
CREATE TABLE ingest_claims (
	content_hash VARCHAR(80) NOT NULL, 
	claimed_at VARCHAR(40) NOT NULL, 
	PRIMARY KEY (content_hash)
);
INSERT INTO ingest_claims VALUES('sha256:c1d46908b522ec468f7008848aaf609a6a148dae73160046979731693bf80698','2026-12-01T13:38:52.666990+00:00');
CREATE TABLE run_shards (
	run_id VARCHAR(64) NOT NULL, 
	shard INTEGER NOT NULL, 
	shards INTEGER NOT NULL, 
	status VARCHAR(16) NOT NULL, 
	host VARCHAR(256), 
	started_at VARCHAR(40) NOT NULL, 
	finished_at VARCHAR(40), 
	PRIMARY KEY (run_id, shard)
);
INSERT INTO run_shards VALUES('20261101-090000-abc123',0,2,'complete','vm','2026-12-02T00:40:04.120287+00:00','2026-12-02T00:40:04.120287+00:00');
CREATE INDEX ix_outcomes_model ON outcomes (model);
CREATE INDEX ix_runs_content_hash ON runs (content_hash);
COMMIT;
