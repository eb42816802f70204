package kafka

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// NewClient returns a franz-go client with the options opts (connection
// options first: brokers, TLS, SASL). It connects lazily. Every Kafka
// client of the router is made here or by this package's own types.
func NewClient(opts ...kgo.Opt) (*kgo.Client, error) {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	return cl, nil
}

// NewAdmin returns an admin client with the connection options opts;
// closing it closes its client.
func NewAdmin(opts ...kgo.Opt) (*kadm.Client, error) {
	cl, err := NewClient(opts...)
	if err != nil {
		return nil, err
	}
	return kadm.NewClient(cl), nil
}
