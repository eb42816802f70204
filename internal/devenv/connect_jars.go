package devenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Environment variables of the Kafka Connect and Debezium helpers.
const (
	// DebeziumVersionEnv overrides DefaultDebeziumVersion (one of the
	// releases in DebeziumReleases).
	DebeziumVersionEnv = "BINLOG_ROUTER_DEBEZIUM_VERSION"
)

// DefaultDebeziumVersion is the Debezium release the tests and the benchmark
// run. It is the newest release whose MariaDB connector is on Maven Central:
// debezium-connector-mariadb stops at 3.5.0.Final there, while the MySQL
// connector and the rest of Debezium go on to 3.6.x and 3.7.x.
const DefaultDebeziumVersion = "3.5.0.Final"

// DebeziumRelease pins a Debezium release to the Kafka Connect runtime it
// was built against (its POM's version.kafka) and the log4j version of that
// Kafka release (Connect's POM has log4j only at compile time).
type DebeziumRelease struct {
	Debezium string // e.g. 3.5.0.Final
	Connect  string // org.apache.kafka:connect-runtime version
	Log4j    string // org.apache.logging.log4j version of that Kafka release
}

// DebeziumReleases are the releases DebeziumJars knows how to run.
var DebeziumReleases = map[string]DebeziumRelease{
	"3.5.0.Final": {Debezium: "3.5.0.Final", Connect: "4.1.1", Log4j: "2.24.3"},
	"3.6.1.Final": {Debezium: "3.6.1.Final", Connect: "4.3.0", Log4j: "2.25.4"},
}

// DebeziumVersion is $BINLOG_ROUTER_DEBEZIUM_VERSION or DefaultDebeziumVersion.
func DebeziumVersion() string {
	if v := strings.TrimSpace(os.Getenv(DebeziumVersionEnv)); v != "" {
		return v
	}
	return DefaultDebeziumVersion
}

// ConnectJars are the directories a Kafka Connect worker runs from.
type ConnectJars struct {
	Release DebeziumRelease
	// Runtime holds Kafka Connect's runtime jars with a log4j slf4j
	// binding, for `java -cp 'Runtime/*'`.
	Runtime string
	// Plugins is the worker's plugin.path: it holds one directory,
	// debezium-connector-<connector>, unpacked from Debezium's plugin
	// archive (the connector, its dependencies and debezium-connect-plugins
	// with the Outbox Event Router), as a user installs it.
	Plugins string
}

// connectPOM lists Kafka Connect's runtime and the log4j jars Kafka's
// release tarball ships with it (slf4j 1.7 binding).
const connectPOM = `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>binlog-router.devenv</groupId>
  <artifactId>connect-jars</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>connect-runtime</artifactId><version>%[1]s</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-api</artifactId><version>%[2]s</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId><version>%[2]s</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>%[2]s</version></dependency>
  </dependencies>
</project>
`

// emptyPOM gives Maven a project to run goals that need none.
const emptyPOM = `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>binlog-router.devenv</groupId>
  <artifactId>debezium-plugin</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
</project>
`

// DebeziumJars returns the Kafka Connect runtime and the Debezium plugin
// directory of the given release, for connector "mariadb" or "mysql". The
// first call per version runs Maven into the user cache directory
// (binlog-router/devenv/connect-VERSION and debezium-CONNECTOR-VERSION):
// `dependency:copy-dependencies` for Connect, `dependency:unpack` of
// io.debezium:debezium-connector-CONNECTOR:VERSION:tar.gz:plugin for the
// plugin. Maven's local repository caches the downloads; later calls return
// the cached directories at once. Concurrent callers each build a temporary
// directory and the first rename wins.
func DebeziumJars(ctx context.Context, version, connector string) (ConnectJars, error) {
	rel, ok := DebeziumReleases[version]
	if !ok {
		return ConnectJars{}, fmt.Errorf("debezium %s: unknown release; known: %s", version, strings.Join(releaseNames(), ", "))
	}
	if connector != "mariadb" && connector != "mysql" {
		return ConnectJars{}, fmt.Errorf("debezium connector %q: want mariadb or mysql", connector)
	}
	runtime, err := cachedJarDir(ctx, "connect-"+rel.Connect, func(mvn, tmp string) error {
		pom := filepath.Join(tmp, "pom.xml")
		if err := os.WriteFile(pom, []byte(fmt.Sprintf(connectPOM, rel.Connect, rel.Log4j)), 0o644); err != nil {
			return err
		}
		return runMaven(ctx, mvn, "-f", pom, copyPlugin+":copy-dependencies",
			"-DincludeScope=runtime", "-DoutputDirectory="+filepath.Join(tmp, "out"))
	})
	if err != nil {
		return ConnectJars{}, fmt.Errorf("fetching Kafka Connect %s with Maven: %w", rel.Connect, err)
	}
	artifact := "debezium-connector-" + connector
	plugins, err := cachedJarDir(ctx, "debezium-"+connector+"-"+rel.Debezium, func(mvn, tmp string) error {
		pom := filepath.Join(tmp, "pom.xml")
		if err := os.WriteFile(pom, []byte(emptyPOM), 0o644); err != nil {
			return err
		}
		return runMaven(ctx, mvn, "-f", pom, copyPlugin+":unpack",
			"-Dartifact=io.debezium:"+artifact+":"+rel.Debezium+":tar.gz:plugin",
			"-DoutputDirectory="+filepath.Join(tmp, "out"))
	})
	if err != nil {
		return ConnectJars{}, fmt.Errorf("fetching %s %s with Maven: %w", artifact, rel.Debezium, err)
	}
	if _, err := os.Stat(filepath.Join(plugins, artifact)); err != nil {
		return ConnectJars{}, fmt.Errorf("debezium plugin archive %s %s has no %s directory: %w", artifact, rel.Debezium, artifact, err)
	}
	return ConnectJars{Release: rel, Runtime: runtime, Plugins: plugins}, nil
}

func releaseNames() []string {
	var out []string
	for v := range DebeziumReleases {
		out = append(out, v)
	}
	return out
}

// cachedJarDir returns the cache directory name, filling it first when it
// is not complete: fill gets Maven and a temporary directory and must leave
// its result in tmp/out, which is then renamed into place.
func cachedJarDir(ctx context.Context, name string, fill func(mvn, tmp string) error) (string, error) {
	root := cacheRoot()
	if root == "" {
		root = filepath.Join(os.TempDir(), "binlog-router-devenv-cache")
	}
	dir := filepath.Join(root, name)
	if _, err := os.Stat(filepath.Join(dir, jarsMarker)); err == nil {
		return dir, nil
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return "", fmt.Errorf("looking for mvn: %w", ErrJavaNotInstalled)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("creating jar cache: %w", err)
	}
	removeStaleTemps(root)
	tmp, err := os.MkdirTemp(root, "tmp-"+name+"-")
	if err != nil {
		return "", fmt.Errorf("creating jar cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := fill(mvn, tmp); err != nil {
		return "", err
	}
	out := filepath.Join(tmp, "out")
	if err := os.WriteFile(filepath.Join(out, jarsMarker), []byte(name+"\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(out, dir); err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, jarsMarker)); statErr == nil {
			return dir, nil // another process finished first
		}
		return "", fmt.Errorf("publishing %s: %w", dir, err)
	}
	return dir, nil
}
