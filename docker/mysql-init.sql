-- Runs once, when the mysql container initialises an empty data directory
-- (mounted into /docker-entrypoint-initdb.d by compose.yaml).
-- The passwords are for this local demo only.

CREATE DATABASE IF NOT EXISTS shop;
USE shop;

-- The outbox table, exactly as `go run ./cmd/binlog-router schema --flavor mysql` prints it.
CREATE TABLE `outbox` (
  `id` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `event_id` CHAR(36) NOT NULL,
  `aggregate_type` VARCHAR(255) NOT NULL,
  `aggregate_id` VARCHAR(255) NOT NULL,
  `event_type` VARCHAR(255) NOT NULL,
  `payload` JSON NULL,
  `created_at` TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  `schema_version` INT NULL,
  `traceparent` VARCHAR(55) NULL,
  `headers` JSON NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `event_id` (`event_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- The application's own table (examples/orders writes to it).
CREATE TABLE `orders` (
  `id` BIGINT NOT NULL PRIMARY KEY,
  `customer` VARCHAR(100) NOT NULL,
  `status` VARCHAR(20) NOT NULL,
  `total` DECIMAL(10,2) NOT NULL
) DEFAULT CHARSET=utf8mb4;

-- The router's user, least privilege: read the binlog as a replica
-- (REPLICATION SLAVE), read the server's binlog and GTID state
-- (REPLICATION CLIENT), and read the outbox table's column names from
-- information_schema (SELECT on the table). It needs nothing else: it never
-- writes to MySQL, and its checkpoint lives in Kafka.
CREATE USER 'binlog_router'@'%' IDENTIFIED BY 'router-secret';
GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'binlog_router'@'%';
GRANT SELECT ON shop.outbox TO 'binlog_router'@'%';

-- The application's user (examples/orders). CREATE only so that the example
-- can run its CREATE TABLE IF NOT EXISTS.
CREATE USER 'app'@'%' IDENTIFIED BY 'app-secret';
GRANT SELECT, INSERT, UPDATE, DELETE, CREATE ON shop.* TO 'app'@'%';
