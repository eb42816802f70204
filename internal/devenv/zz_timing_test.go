package devenv

import (
	"context"
	"testing"
	"time"
)

func TestTiming(t *testing.T) {
	for i := 0; i < 3; i++ {
		t0 := time.Now()
		m, err := StartMariaDB(context.Background(), MariaDBConfig{})
		if err != nil {
			t.Fatal(err)
		}
		t1 := time.Now()
		m.Kill()
		t2 := time.Now()
		m.Start(context.Background())
		t3 := time.Now()
		m.Stop(context.Background())
		t4 := time.Now()
		m.Close()
		t.Logf("start %v kill %v restart %v stop %v close %v", t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), t4.Sub(t3), time.Since(t4))
	}
}
