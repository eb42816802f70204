package repo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxTrackedBytes is the largest file the repository may hold.
const maxTrackedBytes = 1 << 20

func TestNoLargeTrackedFiles(t *testing.T) {
	root := moduleRoot(t)
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (git ls-files: %v)", err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		fi, err := os.Lstat(filepath.Join(root, name))
		if err != nil {
			continue // deleted in the work tree
		}
		if fi.Mode().IsRegular() && fi.Size() > maxTrackedBytes {
			t.Errorf("%s is %d bytes, over the %d-byte limit: build outputs and data sets belong in .gitignore", name, fi.Size(), maxTrackedBytes)
		}
	}
}
