CREATE TABLE `outbox` (
  `id` CHAR(36) NOT NULL,
  `aggregatetype` VARCHAR(255) NOT NULL,
  `aggregateid` VARCHAR(255) NOT NULL,
  `type` VARCHAR(255) NOT NULL,
  `payload` JSON NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
