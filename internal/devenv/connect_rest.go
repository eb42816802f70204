package devenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ConnectorOffset is one source partition's offset as Kafka Connect's REST
// API shows it (GET /connectors/NAME/offsets). Offset is kept as the JSON
// text the worker sent, so a test can hand it on exactly as a user would
// copy it.
type ConnectorOffset struct {
	Partition map[string]any  `json:"partition"`
	Offset    json.RawMessage `json:"offset"`
}

// ConnectorStatus is GET /connectors/NAME/status.
type ConnectorStatus struct {
	Name      string     `json:"name"`
	Connector TaskStatus `json:"connector"`
	Tasks     []struct {
		TaskStatus
		ID int `json:"id"`
	} `json:"tasks"`
}

// TaskStatus is the state of a connector or of one task.
type TaskStatus struct {
	State    string `json:"state"` // UNASSIGNED, RUNNING, PAUSED, STOPPED, FAILED, RESTARTING
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace,omitempty"`
}

// restError is a non-2xx answer of the REST API.
type restError struct {
	Method, Path string
	Status       int
	Body         string
}

func (e *restError) Error() string {
	return fmt.Sprintf("kafka connect %s %s: HTTP %d: %s", e.Method, e.Path, e.Status, strings.TrimSpace(e.Body))
}

// do sends one REST request; in (when not nil) is sent as JSON, out (when
// not nil) receives the JSON answer.
func (c *Connect) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL()+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return &restError{Method: method, Path: path, Status: resp.StatusCode, Body: string(b)}
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("kafka connect %s %s: decoding %q: %w", method, path, truncateText(string(b), 200), err)
		}
	}
	return nil
}

// CreateConnector creates connector name with config (POST /connectors).
// initialState is "" (RUNNING) or "STOPPED", "PAUSED" (KIP-980), so that
// its offsets can be set before it runs.
func (c *Connect) CreateConnector(ctx context.Context, name string, config map[string]string, initialState string) error {
	req := map[string]any{"name": name, "config": config}
	if initialState != "" {
		req["initial_state"] = initialState
	}
	return c.do(ctx, http.MethodPost, "/connectors", req, nil)
}

// DeleteConnector deletes connector name; its offsets stay in the offsets
// topic.
func (c *Connect) DeleteConnector(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "/connectors/"+url.PathEscape(name), nil, nil)
}

// Status returns connector name's status.
func (c *Connect) Status(ctx context.Context, name string) (ConnectorStatus, error) {
	var s ConnectorStatus
	err := c.do(ctx, http.MethodGet, "/connectors/"+url.PathEscape(name)+"/status", nil, &s)
	return s, err
}

// WaitRunning waits until connector name and all its tasks (at least one)
// are RUNNING. A FAILED connector or task ends the wait with its trace.
func (c *Connect) WaitRunning(ctx context.Context, name string) error {
	return c.waitState(ctx, name, "RUNNING", true)
}

// waitState polls the status until the connector is in state and, when
// tasks is set, has at least one task and every task is in state.
func (c *Connect) waitState(ctx context.Context, name, state string, tasks bool) error {
	var last ConnectorStatus
	var lastErr error
	for {
		last, lastErr = c.Status(ctx, name)
		if lastErr == nil {
			if last.Connector.State == "FAILED" {
				return fmt.Errorf("connector %s failed: %s", name, lastLines(last.Connector.Trace, 30))
			}
			done := last.Connector.State == state && (!tasks || len(last.Tasks) > 0)
			for _, t := range last.Tasks {
				if t.State == "FAILED" {
					return fmt.Errorf("connector %s task %d failed: %s", name, t.ID, lastLines(t.Trace, 30))
				}
				if tasks && t.State != state {
					done = false
				}
			}
			if done {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for connector %s to be %s: %w (last status %+v, last error %v)", name, state, ctx.Err(), last, lastErr)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// StopConnector stops connector name (PUT /connectors/NAME/stop, KIP-875):
// its tasks are shut down, committing their offsets, and it stays STOPPED,
// so that its offsets can be read and altered. It returns once the status
// says STOPPED.
func (c *Connect) StopConnector(ctx context.Context, name string) error {
	if err := c.do(ctx, http.MethodPut, "/connectors/"+url.PathEscape(name)+"/stop", nil, nil); err != nil {
		return err
	}
	return c.waitState(ctx, name, "STOPPED", false)
}

// ResumeConnector resumes a STOPPED or PAUSED connector and waits until it
// and its tasks run.
func (c *Connect) ResumeConnector(ctx context.Context, name string) error {
	if err := c.do(ctx, http.MethodPut, "/connectors/"+url.PathEscape(name)+"/resume", nil, nil); err != nil {
		return err
	}
	return c.WaitRunning(ctx, name)
}

// Offsets returns connector name's committed offsets
// (GET /connectors/NAME/offsets).
func (c *Connect) Offsets(ctx context.Context, name string) ([]ConnectorOffset, error) {
	var resp struct {
		Offsets []ConnectorOffset `json:"offsets"`
	}
	err := c.do(ctx, http.MethodGet, "/connectors/"+url.PathEscape(name)+"/offsets", nil, &resp)
	return resp.Offsets, err
}

// OffsetsText returns the body of GET /connectors/NAME/offsets as the
// worker sent it.
func (c *Connect) OffsetsText(ctx context.Context, name string) (string, error) {
	var raw json.RawMessage
	err := c.do(ctx, http.MethodGet, "/connectors/"+url.PathEscape(name)+"/offsets", nil, &raw)
	return string(raw), err
}

// AlterOffsets sets the offsets of a STOPPED connector
// (PATCH /connectors/NAME/offsets, KIP-875).
func (c *Connect) AlterOffsets(ctx context.Context, name string, offsets []ConnectorOffset) error {
	return c.do(ctx, http.MethodPatch, "/connectors/"+url.PathEscape(name)+"/offsets",
		map[string]any{"offsets": offsets}, nil)
}

// IsNotFound reports whether err is the REST API's 404.
func IsNotFound(err error) bool {
	var re *restError
	return errors.As(err, &re) && re.Status == http.StatusNotFound
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// AlterOffsetsText is AlterOffsets with the request body as JSON text, as
// a user passes it to curl.
func (c *Connect) AlterOffsetsText(ctx context.Context, name, body string) error {
	return c.do(ctx, http.MethodPatch, "/connectors/"+url.PathEscape(name)+"/offsets", json.RawMessage(body), nil)
}
