package route

import "testing"

func TestTopicPattern(t *testing.T) {
	for _, tc := range []struct {
		template string
		match    []string
		miss     []string
	}{
		{"outbox.event.{event_type}", []string{"outbox.event.OrderCreated", "outbox.event.a.b"},
			[]string{"outbox.event.", "outboxXevent.Order", "x.outbox.event.Order", "outbox.event.Order!"}},
		{"{aggregate_type}-{event_type}", []string{"order-Created", "a-b-c"}, []string{"order", "-Created"}},
		{"fixed.topic", []string{"fixed.topic"}, []string{"fixedXtopic", "fixed.topic2"}},
	} {
		re, err := TopicPattern(tc.template)
		if err != nil {
			t.Fatalf("%s: %v", tc.template, err)
		}
		for _, s := range tc.match {
			if !re.MatchString(s) {
				t.Errorf("%s does not match %q", tc.template, s)
			}
		}
		for _, s := range tc.miss {
			if re.MatchString(s) {
				t.Errorf("%s matches %q", tc.template, s)
			}
		}
	}
	if _, err := TopicPattern("bad{x}"); err == nil {
		t.Error("an invalid template gave a pattern")
	}
}
