CREATE TABLE `my.app`.`out``box` (
  `id` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `uuid` CHAR(36) NOT NULL,
  `kind` VARCHAR(255) NOT NULL,
  `entity``id` VARCHAR(255) NOT NULL,
  `Type` VARCHAR(255) NOT NULL,
  `body` LONGTEXT NULL CHECK (JSON_VALID(`body`)),
  `meta` LONGTEXT NULL CHECK (JSON_VALID(`meta`)),
  PRIMARY KEY (`id`),
  UNIQUE KEY `uuid` (`uuid`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
