package validate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestCheckLimits(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name   string
		in     limitsInput
		status Status
		want   []string // in detail or fix
	}{
		{"defaults fit", limitsInput{flag: mib, broker: 1048588,
			topics: []sizeLimit{{topic: "outbox.event.A", role: "outbox", bytes: 1048588}}},
			OK, []string{"--max-message-bytes 1048576 fits: the brokers' message.max.bytes 1048588"}},
		{"topic override larger", limitsInput{flag: mib, broker: 1048588,
			topics: []sizeLimit{{topic: "outbox.event.A", role: "outbox", bytes: 5 * mib, override: true}}},
			OK, []string{"outbox topic outbox.event.A: max.message.bytes 5242880"}},
		{"topic below", limitsInput{flag: mib, broker: 1048588, seeds: "k1:9092",
			topics: []sizeLimit{{topic: "outbox.event.A", role: "outbox", bytes: 20000, override: true},
				{topic: "outbox.event.B", role: "outbox", bytes: 1048588}}},
			Warn, []string{"outbox topic outbox.event.A: max.message.bytes 20000", "row error",
				"kafka-configs.sh --bootstrap-server k1:9092 --alter --entity-type topics --entity-name outbox.event.A --add-config max.message.bytes=1048576",
				"lower --max-message-bytes to 20000"}},
		{"brokers below", limitsInput{flag: 2 * mib, broker: 1048588},
			Warn, []string{"the brokers' message.max.bytes 1048588", "raise the brokers' message.max.bytes to 2097152", "lower --max-message-bytes to 1048588"}},
		{"dead-letter topic below", limitsInput{flag: mib, broker: 1048588,
			topics: []sizeLimit{{topic: "dlq", role: "dead-letter", bytes: 50000, override: true}}},
			Warn, []string{"dead-letter topic dlq: max.message.bytes 50000"}},
		{"denied", limitsInput{flag: mib, brokerErr: fmt.Errorf("broker 1: %w", kerr.ClusterAuthorizationFailed)},
			Warn, []string{"cannot read the brokers' message.max.bytes", "grant DESCRIBE_CONFIGS on the cluster", "assumes --max-message-bytes fits"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := checkLimits(c.in)
			if got.Status != c.status {
				t.Errorf("status %s, want %s: %s", got.Status, c.status, got)
			}
			for _, w := range c.want {
				if !strings.Contains(got.String(), w) {
					t.Errorf("%q lacks %q", got.String(), w)
				}
			}
		})
	}
}
