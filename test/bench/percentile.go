package main

import (
	"slices"
	"time"
)

// distribution summarises durations in milliseconds.
type distribution struct {
	N      int     `json:"n"`
	P50Ms  float64 `json:"p50_ms"`
	P99Ms  float64 `json:"p99_ms"`
	P999Ms float64 `json:"p999_ms"`
	MaxMs  float64 `json:"max_ms"`
}

// summarise sorts ds and returns nearest-rank percentiles.
func summarise(ds []time.Duration) distribution {
	if len(ds) == 0 {
		return distribution{}
	}
	slices.Sort(ds)
	at := func(p float64) float64 {
		i := int(p*float64(len(ds))+0.999999) - 1 // nearest rank: ceil(p*n)-1
		i = min(max(i, 0), len(ds)-1)
		return ms(ds[i])
	}
	return distribution{N: len(ds), P50Ms: at(0.50), P99Ms: at(0.99), P999Ms: at(0.999), MaxMs: ms(ds[len(ds)-1])}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
