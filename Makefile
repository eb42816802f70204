# binlog-router: the two commands a newcomer needs are `make demo` and `make test`.
GO       ?= go
PKGS     := ./...
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
FUZZTIME ?= 100000x
KAFKA_VERSION ?= 4.4.0
# The suites of the Apache Kafka pass (test-apache): those verified on Apache Kafka 4.4.0. The
# rest need kfake's fault injection (each has an Apache variant here that stops, kills or pauses
# real nodes instead) or test only the MariaDB side.
APACHE_TESTS ?= ^(TestRoutesOutboxRowsEndToEnd|TestRestartResumesFromCheckpoint|TestCrashSIGKILL|TestHATakeover|TestBadRowsDeadLettered|TestBadRowStopsByDefault|TestReplayMiddleRange|TestCheckpointCmdPurged|TestCheckpointCmdResetThenLatest|TestCheckpointCmdRefusedWhileRunning|TestValidateDefaultEnv|TestCheckpointCmdSetEarlierRepublishes|TestCheckpointShow|TestReplayTimeRange|TestValidateServerSettings|TestValidatePrivileges|TestValidateOutboxTable|TestValidateCheckpointTopic|TestValidateRetentionAndPurge|TestValidateUnreachable|TestKcatReadsRecords|TestFaultKafkaGoneTooLong|TestLargeTransaction|TestTwoGTIDDomains|TestMissingTopicStops|TestFaultApacheKafkaUnavailable|TestFaultApacheBrokerRestart|TestTransactionVersion0|TestClusterKillLeaderAndCoordinator|TestClusterBelowMinInsyncReplicas|TestStallPastTransactionTimeout|TestSecondRouterFences|TestShutdownTimeoutExitCode|TestCheckpointTopicCompacted|TestValidateThreeBrokers|TestCheckpointCmdActivitySigns|TestInboxAppliesOnceAndDeadLetters|TestInboxMissingID|TestInboxStopPolicy|TestInboxMetrics|TestInboxPoisonDoesNotBlockOtherPartitions|TestInboxGroupHandoff|TestInboxHandlerDeadlockRetried|TestInboxKillWindows|TestInboxBehindRouter|TestInboxBehindRouterAtLeastOnce|TestInboxBehindRouterReplay|TestInboxDeadLetterTopic|TestRecordTimestampRefused|TestTopicLimitBatchesRows|TestTopicLimitRowTooLarge|TestBrokerLimitRowTooLarge|TestValidateComparesLimits|TestApacheSASLSSL|TestApacheACLs|TestJavaPartitionerAgrees|TestStopInsideBigTransaction|TestStopApacheBrokerRestartDuringDrain|TestSourceIgnoringResumePosition|TestCheckpointCmdREADMEGrants|TestFaultRollingRestart|TestFaultRollingKillCoordinator|TestFaultRollingInbox|TestPartitionCountChange|TestRecoverPurgedGap|TestRecoverKill|TestRecoverPolling|TestRecoverOrderCreatedAt|TestFaultTurnsKillBetweenCommits|TestFaultTurnsFencedSecondID|TestClusterTurnsCoordinatorKill)$$

.PHONY: image build demo demo-apache test test-short test-faults test-apache test-kafka-issues test-debezium kafka-jars debezium-jars fuzz-short bench lint fmt vet clean

build: ## build bin/binlog-router (static)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/binlog-router ./cmd/binlog-router

demo: ## the whole product on a private MariaDB and an in-process Kafka
	$(GO) run ./test/demo

demo-apache: ## the same demo on a private Apache Kafka node (needs Java and Maven)
	$(GO) run ./test/demo -kafka=apache

test: lint ## unit, integration and fault tests with the race detector, plus a short fuzz run
	$(GO) test -race -shuffle=on -count=1 -timeout 30m $(PKGS)
	$(MAKE) test-apache
	$(MAKE) test-debezium
	$(MAKE) fuzz-short

kafka-jars: ## fetch Apache Kafka's jars from Maven Central into the user cache (KAFKA_VERSION=4.x.y picks another release)
	BINLOG_ROUTER_KAFKA_VERSION=$(KAFKA_VERSION) $(GO) run ./test/kafkajars

debezium-jars: ## fetch Kafka Connect's runtime and Debezium's MariaDB connector plugin from Maven Central into the user cache
	$(GO) run ./test/debeziumjars

test-apache: kafka-jars ## the Kafka-side suites again on a private Apache Kafka (needs java and mvn)
	BINLOG_ROUTER_TEST_BROKER=apache BINLOG_ROUTER_KAFKA_VERSION=$(KAFKA_VERSION) \
		$(GO) test -race -count=1 -timeout 40m -p 1 -run '$(APACHE_TESTS)|^TestApacheKafka' ./internal/devenv/ ./inbox/ ./test/

# The Apache Kafka issues the router works around (docs/kafka-issues.md),
# reproduced without the router, and the router's repair; minutes each
# (private three-node clusters), so not part of `make test`.
KAFKA_ISSUE_TESTS ?= ^(TestKafkaHangingMarkerAfterLeaderStop|TestRouterRepairsHangingCommit)$$

test-kafka-issues: kafka-jars ## reproduce, without the router, the Apache Kafka issues of docs/kafka-issues.md (private clusters, needs java and mvn; about 3 minutes)
	BINLOG_ROUTER_TEST_BROKER=apache BINLOG_ROUTER_KAFKA_VERSION=$(KAFKA_VERSION) \
		$(GO) test -race -count=1 -timeout 20m -p 1 -run '$(KAFKA_ISSUE_TESTS)' -v ./test/

test-debezium: kafka-jars debezium-jars ## Debezium side by side: the same rows through Debezium and the router, and the cut-over (private Apache Kafka, Kafka Connect, needs java and mvn)
	BINLOG_ROUTER_TEST_BROKER=apache BINLOG_ROUTER_KAFKA_VERSION=$(KAFKA_VERSION) \
		$(GO) test -race -count=1 -timeout 30m -p 1 -run '^TestDebezium' ./test/

test-short: ## unit tests only (no servers)
	$(GO) test -short -count=1 $(PKGS)

# test-faults: runs of each fault suite (N), the variant (FAULTS=long unless
# set otherwise) and the suites (RUN, a go test -run pattern; default every
# Fault, Crash, Failover, HA, Rolling and Cluster suite). RESULTS=FILE
# appends every run to FILE and counts all its runs of the same code,
# broker and variant, so N=20 can be gathered in parts.
N       ?= 1
FAULTS  ?= long
RUN     ?=
RESULTS ?=

test-faults: $(if $(filter apache,$(BINLOG_ROUTER_TEST_BROKER)),kafka-jars) ## each fault suite N times (make test-faults N=20), one table: runs, failures, lost, duplicated, worst recovery (BINLOG_ROUTER_TEST_BROKER=apache: on Apache Kafka)
	FAULTS=$(FAULTS) BINLOG_ROUTER_KAFKA_VERSION=$(KAFKA_VERSION) $(GO) run ./test/faultstats -n $(N) $(if $(RUN),-run '$(RUN)') $(if $(RESULTS),-results '$(RESULTS)')

fuzz-short: ## a short run of every fuzz target found in the code (a count, not a duration: Go 1.26's -fuzztime=<duration> can fail with 'context deadline exceeded', golang/go#75804)
	@set -e; n=0; for pkg in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
		for fn in $$(grep -h '^func Fuzz' $$pkg/*_test.go | sed 's/^func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
			echo "fuzz $$pkg $$fn"; n=$$((n+1)); \
			$(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done; echo "fuzzed $$n targets"; test $$n -gt 0

bench: ## the side-by-side benchmark (writes bench-results/)
	$(GO) run ./test/bench $(BENCHFLAGS)
	$(GO) test -run '^$$' -bench . -benchmem ./internal/...

lint: fmt vet

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

image: ## build the container image (needs a Docker engine)
	docker build -f docker/Dockerfile --build-arg VERSION=$(VERSION) -t binlog-router:$(VERSION) .

clean:
	rm -rf bin bench-results
