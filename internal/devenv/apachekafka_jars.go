package devenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Environment variables of the Apache Kafka helpers.
const (
	// KafkaVersionEnv overrides DefaultKafkaVersion (any 4.x on Maven Central).
	KafkaVersionEnv = "BINLOG_ROUTER_KAFKA_VERSION"
	// KafkaJarsEnv names a directory of Kafka jars to use as is, skipping Maven.
	KafkaJarsEnv = "BINLOG_ROUTER_KAFKA_JARS"
)

// DefaultKafkaVersion is the Apache Kafka release the tests run by default.
const DefaultKafkaVersion = "4.4.0"

// ErrJavaNotInstalled reports that java or mvn is missing.
var ErrJavaNotInstalled = errors.New("java and mvn are needed for a real Kafka broker; install them with `apt-get install openjdk-17-jdk-headless maven` (Debian/Ubuntu)")

// jarsMarker is written last into a complete jar directory.
const jarsMarker = ".complete"

// kafkaPOM lists the broker, its tools and the client. The slf4j binding is
// not in any Kafka POM (only in the release tarball); KafkaJars adds it in a
// second step at the log4j version the broker pulls in.
const kafkaPOM = `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>binlog-router.devenv</groupId>
  <artifactId>kafka-jars</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>%[1]s</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>%[1]s</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-clients</artifactId><version>%[1]s</version></dependency>
  </dependencies>
</project>
`

// copyPlugin is the pinned maven-dependency-plugin.
const copyPlugin = "org.apache.maven.plugins:maven-dependency-plugin:3.6.1"

// KafkaVersion is the version KafkaJars fetches: $BINLOG_ROUTER_KAFKA_VERSION
// or DefaultKafkaVersion.
func KafkaVersion() string {
	if v := strings.TrimSpace(os.Getenv(KafkaVersionEnv)); v != "" {
		return v
	}
	return DefaultKafkaVersion
}

var log4jCoreJar = regexp.MustCompile(`^log4j-core-(2\.[0-9.]+)\.jar$`)

// KafkaJars returns a directory holding Apache Kafka's broker, tools and
// client jars of the given version with their runtime dependencies and a
// log4j slf4j binding, for `java -cp 'DIR/*'`. The first call per version
// runs Maven (`dependency:copy-dependencies`) into the user cache directory
// (binlog-router/devenv/kafka-VERSION); Maven's local repository caches the
// downloads, so a fresh machine fetches once. Later calls return the cached
// directory at once. Concurrent callers each build a temporary directory and
// the first rename wins. $BINLOG_ROUTER_KAFKA_JARS, when set, is returned as
// is.
func KafkaJars(ctx context.Context, version string) (string, error) {
	if d := os.Getenv(KafkaJarsEnv); d != "" {
		return d, nil
	}
	return cachedJarDir(ctx, "kafka-"+version, func(mvn, tmp string) error {
		pom := filepath.Join(tmp, "pom.xml")
		if err := os.WriteFile(pom, []byte(fmt.Sprintf(kafkaPOM, version)), 0o644); err != nil {
			return err
		}
		libs := filepath.Join(tmp, "out")
		if err := runMaven(ctx, mvn, "-f", pom, copyPlugin+":copy-dependencies",
			"-DincludeScope=runtime", "-DoutputDirectory="+libs); err != nil {
			return fmt.Errorf("fetching Apache Kafka %s with Maven: %w", version, err)
		}
		log4j, err := log4jVersion(libs)
		if err != nil {
			return fmt.Errorf("fetching Apache Kafka %s: %w", version, err)
		}
		if err := runMaven(ctx, mvn, "-f", pom, copyPlugin+":copy",
			"-Dartifact=org.apache.logging.log4j:log4j-slf4j-impl:"+log4j, "-DoutputDirectory="+libs); err != nil {
			return fmt.Errorf("fetching log4j-slf4j-impl %s with Maven: %w", log4j, err)
		}
		return nil
	})
}

// log4jVersion finds the log4j-core version among the copied jars.
func log4jVersion(libs string) (string, error) {
	entries, err := os.ReadDir(libs)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if m := log4jCoreJar.FindStringSubmatch(e.Name()); m != nil {
			return m[1], nil
		}
	}
	return "", fmt.Errorf("no log4j-core jar among the broker's dependencies in %s", libs)
}

func runMaven(ctx context.Context, mvn string, args ...string) error {
	cmd := exec.CommandContext(ctx, mvn, append([]string{"-B", "-q"}, args...)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%w\n%s", err, lastLines(out.String(), 30))
	}
	return nil
}
