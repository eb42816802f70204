package harness

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// Fault tests run a short variant in `make test` and a long one with
// FAULTS=long (`make test-faults`).
func FaultsLong() bool { return os.Getenv("FAULTS") == "long" }

// ByMode returns short, or long under FAULTS=long.
func ByMode[T any](short, long T) T {
	if FaultsLong() {
		return long
	}
	return short
}

// FaultRand returns the test's random source, seeded from SEED when set
// (to replay a failure) and otherwise from the clock; the seed is logged.
func FaultRand(t testing.TB) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with SEED=%d)", seed, seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// RandDur is a random duration in [lo, hi].
func RandDur(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rng.Int64N(int64(hi-lo)+1))
}
