package devenv

import "testing"

// TestFreePortsDistinct checks that the ports of one layout never repeat:
// a node given the same port for two listeners does not start.
func TestFreePortsDistinct(t *testing.T) {
	ports, err := freePorts(200)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p <= 0 || seen[p] {
			t.Fatalf("port %d given twice or invalid in %v", p, ports)
		}
		seen[p] = true
	}
}
