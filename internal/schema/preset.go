package schema

import (
	"fmt"
	"strings"
)

// Preset is a named outbox layout: its column names and the topic template
// the router uses for it when none is configured.
type Preset struct {
	Name    string  // the name PresetByName accepts
	Columns Columns // column names of the layout
	// TopicTemplate is the default topic template for this preset, or ""
	// when the preset has none and the config layer's own default applies.
	// Placeholders are written {aggregate_type}, {event_type}, ...
	TopicTemplate string
}

// Preset names accepted by PresetByName.
const (
	PresetDefault  = "default"
	PresetDebezium = "debezium"
)

// DebeziumTopicTemplate is the topic Debezium's outbox event router writes
// to by default (route.topic.replacement "outbox.event.${routedByValue}",
// routed by aggregatetype), so a migration keeps its topics.
const DebeziumTopicTemplate = "outbox.event.{aggregate_type}"

// DebeziumColumns maps Debezium's outbox table: id is the event id (a UUID),
// there is no created_at (the commit time is used), and the optional
// binlog-router columns are not used; set them with their flags to add them.
func DebeziumColumns() Columns {
	return Columns{
		EventID:       "id",
		AggregateType: "aggregatetype",
		AggregateID:   "aggregateid",
		EventType:     "type",
		Payload:       "payload",
	}
}

// presets returns every preset, in the order error messages list them.
func presets() []Preset {
	return []Preset{
		{Name: PresetDefault, Columns: DefaultColumns()},
		{Name: PresetDebezium, Columns: DebeziumColumns(), TopicTemplate: DebeziumTopicTemplate},
	}
}

// PresetNames returns the names PresetByName accepts.
func PresetNames() []string {
	ps := presets()
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return names
}

// PresetByName returns the preset called name ("default" or "debezium").
// An unknown name is an error listing the valid names.
func PresetByName(name string) (Preset, error) {
	for _, p := range presets() {
		if p.Name == name {
			return p, nil
		}
	}
	return Preset{}, fmt.Errorf("unknown outbox preset %q; use one of: %s", name, strings.Join(PresetNames(), ", "))
}
