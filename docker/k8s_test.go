package docker_test

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/binlog-router/binlog-router/internal/metrics"
)

// k8sFiles are the Kubernetes manifests in this directory.
var k8sFiles = []string{"k8s-sidecar.yaml", "k8s-ha.yaml"}

// routerContainer is the name of the router's container in every manifest.
const routerContainer = "binlog-router"

// k8sManifest is one file's objects, each decoded strictly into the typed
// structs of k8s.io/api and the Prometheus Operator.
type k8sManifest struct {
	deployments []*appsv1.Deployment
	pdbs        []*policyv1.PodDisruptionBudget
	services    []*corev1.Service
	monitors    []*monitoringv1.ServiceMonitor
}

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// decodeManifest decodes every YAML document of data strictly: an unknown
// or misspelled field, a duplicate key, a value of the wrong type or an
// object kind the tests do not know is an error.
func decodeManifest(data []byte) (*k8sManifest, error) {
	m := &k8sManifest{}
	for i, doc := range docSeparator.Split(string(data), -1) {
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if string(js) == "null" {
			continue // comments only
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		var obj any
		switch tm.APIVersion + " " + tm.Kind {
		case "apps/v1 Deployment":
			d := &appsv1.Deployment{}
			m.deployments, obj = append(m.deployments, d), d
		case "policy/v1 PodDisruptionBudget":
			p := &policyv1.PodDisruptionBudget{}
			m.pdbs, obj = append(m.pdbs, p), p
		case "v1 Service":
			s := &corev1.Service{}
			m.services, obj = append(m.services, s), s
		case "monitoring.coreos.com/v1 ServiceMonitor":
			s := &monitoringv1.ServiceMonitor{}
			m.monitors, obj = append(m.monitors, s), s
		default:
			return nil, fmt.Errorf("document %d: unknown object %q %q", i+1, tm.APIVersion, tm.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", i+1, tm.Kind, err)
		}
	}
	return m, nil
}

// probeRouter answers path as the router's metrics server does while it is
// not streaming: a router starting up, or a standby of an HA pair.
func probeRouter(path string) int {
	h := metrics.Handler(metrics.New(nil), nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code
}

// validateManifest checks what the schema cannot: that the objects of one
// file fit together and fit the router. minMemory is the highest peak RSS
// measured (BENCHMARKS.md).
func validateManifest(m *k8sManifest, minMemory resource.Quantity) error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(m.deployments) == 0 {
		fail("no Deployment")
	}
	for _, d := range m.deployments {
		errs = append(errs, validateDeployment(d, minMemory)...)
	}
	for _, p := range m.pdbs {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err != nil || sel.Empty() {
			fail("PodDisruptionBudget %s: selector %v: %v", p.Name, p.Spec.Selector, err)
			continue
		}
		i := slices.IndexFunc(m.deployments, func(d *appsv1.Deployment) bool {
			return sel.Matches(labels.Set(d.Spec.Template.Labels))
		})
		if i < 0 {
			fail("PodDisruptionBudget %s: selector %s matches the pods of no Deployment", p.Name, sel)
			continue
		}
		replicas := int(ptrOr(m.deployments[i].Spec.Replicas, 1))
		switch {
		case p.Spec.MaxUnavailable != nil && p.Spec.MinAvailable != nil:
			fail("PodDisruptionBudget %s: both minAvailable and maxUnavailable", p.Name)
		case p.Spec.MaxUnavailable != nil:
			if n, err := intstr.GetScaledValueFromIntOrPercent(p.Spec.MaxUnavailable, replicas, true); err != nil || n < 1 {
				fail("PodDisruptionBudget %s: maxUnavailable %s allows no eviction, a node drain would wait forever", p.Name, p.Spec.MaxUnavailable)
			}
		case p.Spec.MinAvailable != nil:
			if n, err := intstr.GetScaledValueFromIntOrPercent(p.Spec.MinAvailable, replicas, true); err != nil || n >= replicas || n < 1 {
				fail("PodDisruptionBudget %s: minAvailable %s of %d replicas", p.Name, p.Spec.MinAvailable, replicas)
			}
		default:
			fail("PodDisruptionBudget %s: neither minAvailable nor maxUnavailable", p.Name)
		}
	}
	for _, s := range m.services {
		sel := labels.SelectorFromSet(s.Spec.Selector)
		i := slices.IndexFunc(m.deployments, func(d *appsv1.Deployment) bool {
			return len(s.Spec.Selector) > 0 && sel.Matches(labels.Set(d.Spec.Template.Labels))
		})
		if i < 0 {
			fail("Service %s: selector %s matches the pods of no Deployment", s.Name, sel)
			continue
		}
		c, port, err := routerMetricsPort(m.deployments[i])
		if err != nil {
			fail("Service %s: %v", s.Name, err)
			continue
		}
		for _, sp := range s.Spec.Ports {
			if n, ok := resolvePort(c, sp.TargetPort); !ok || n != port {
				fail("Service %s: port %s targets %s, not the router's metrics port %d", s.Name, sp.Name, sp.TargetPort.String(), port)
			}
		}
	}
	for _, sm := range m.monitors {
		sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
		if err != nil || sel.Empty() {
			fail("ServiceMonitor %s: selector %v: %v", sm.Name, sm.Spec.Selector, err)
			continue
		}
		i := slices.IndexFunc(m.services, func(s *corev1.Service) bool { return sel.Matches(labels.Set(s.Labels)) })
		if i < 0 {
			fail("ServiceMonitor %s: selector %s matches the labels of no Service", sm.Name, sel)
			continue
		}
		svc := m.services[i]
		if len(sm.Spec.Endpoints) == 0 {
			fail("ServiceMonitor %s: no endpoints", sm.Name)
		}
		for _, ep := range sm.Spec.Endpoints {
			if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == ep.Port }) {
				fail("ServiceMonitor %s: port %q is no port of Service %s", sm.Name, ep.Port, svc.Name)
			}
			path := cmpOr(ep.Path, "/metrics")
			if code := probeRouter(path); code != http.StatusOK {
				fail("ServiceMonitor %s: path %s answers %d on the router", sm.Name, path, code)
			}
		}
	}
	return errors.Join(errs...)
}

func validateDeployment(d *appsv1.Deployment, minMemory resource.Quantity) []error {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("Deployment %s: "+format, append([]any{d.Name}, args...)...))
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		fail("selector %v does not match the pod labels %v", d.Spec.Selector, d.Spec.Template.Labels)
	}
	c, port, err := routerMetricsPort(d)
	if err != nil {
		return append(errs, fmt.Errorf("Deployment %s: %w", d.Name, err))
	}
	ha := routerSetting(c, "ha") == "true"
	replicas := ptrOr(d.Spec.Replicas, 1)
	if replicas > 1 && !ha {
		fail("%d replicas without --ha would each route every event", replicas)
	}
	for _, p := range []struct {
		what  string
		probe *corev1.Probe
	}{{"readiness", c.ReadinessProbe}, {"liveness", c.LivenessProbe}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			fail("no %s probe over HTTP", p.what)
			continue
		}
		g := p.probe.HTTPGet
		if n, ok := resolvePort(c, g.Port); !ok || n != port {
			fail("%s probe port %s is not the metrics port %d of --metrics-addr", p.what, g.Port.String(), port)
		}
		code := probeRouter(g.Path)
		switch {
		case code == http.StatusNotFound || code == http.StatusMethodNotAllowed:
			fail("%s probe path %s is not served by the router", p.what, g.Path)
		case code != http.StatusOK && p.what == "liveness":
			fail("liveness probe path %s answers %d while the router is not streaming: it would restart a standby or a starting router", g.Path, code)
		case code != http.StatusOK && ha && replicas > 1:
			fail("readiness probe path %s answers %d on a standby: only the active router would be Ready, and the PodDisruptionBudget and rollouts would wait forever", g.Path, code)
		}
	}
	req, lim := c.Resources.Requests, c.Resources.Limits
	for name, r := range req {
		if l, ok := lim[name]; ok && r.Cmp(l) > 0 {
			fail("requests %s %s above its limit %s", name, r.String(), l.String())
		}
	}
	mem, ok := req[corev1.ResourceMemory]
	if !ok || mem.Cmp(minMemory) < 0 {
		fail("memory request %s below the highest peak RSS measured, %s", mem.String(), minMemory.String())
	}
	if l, ok := lim[corev1.ResourceMemory]; ok {
		gml := routerEnv(c, "GOMEMLIMIT")
		q, err := resource.ParseQuantity(strings.TrimSuffix(gml, "B"))
		if err != nil || q.Cmp(l) >= 0 {
			fail("GOMEMLIMIT %q must be set below the memory limit %s", gml, l.String())
		}
	}
	return errs
}

// routerMetricsPort finds the router's container in d and the port of its
// --metrics-addr, which the container must declare.
func routerMetricsPort(d *appsv1.Deployment) (*corev1.Container, int32, error) {
	cs := d.Spec.Template.Spec.Containers
	i := slices.IndexFunc(cs, func(c corev1.Container) bool { return c.Name == routerContainer })
	if i < 0 {
		return nil, 0, fmt.Errorf("no container %q", routerContainer)
	}
	c := &cs[i]
	addr := routerSetting(c, "metrics-addr")
	_, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, 0, fmt.Errorf("--metrics-addr %q: %w", addr, err)
	}
	port, err := strconv.ParseInt(ps, 10, 32)
	if err != nil {
		return nil, 0, fmt.Errorf("--metrics-addr %q: %w", addr, err)
	}
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.ContainerPort == int32(port) }) {
		return nil, 0, fmt.Errorf("container %q does not declare port %d of --metrics-addr", c.Name, port)
	}
	return c, int32(port), nil
}

// routerSetting is the value of the router's flag --name in c: its argument
// if given, else its BINLOG_ROUTER_* variable ("true" for a bare boolean
// flag).
func routerSetting(c *corev1.Container, name string) string {
	for i, a := range c.Args {
		if a == "--"+name {
			if i+1 < len(c.Args) && !strings.HasPrefix(c.Args[i+1], "-") {
				return c.Args[i+1]
			}
			return "true"
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return routerEnv(c, "BINLOG_ROUTER_"+strings.ToUpper(strings.ReplaceAll(name, "-", "_")))
}

func routerEnv(c *corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// resolvePort is the container port that p (a number or a port name) means.
func resolvePort(c *corev1.Container, p intstr.IntOrString) (int32, bool) {
	if p.Type == intstr.Int {
		return p.IntVal, slices.ContainsFunc(c.Ports, func(cp corev1.ContainerPort) bool { return cp.ContainerPort == p.IntVal })
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return cp.ContainerPort, true
		}
	}
	return 0, false
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

var peakRSSRE = regexp.MustCompile(`peak RSS\s+([0-9.]+) MB`)

// measuredPeakRSS is the highest peak RSS in BENCHMARKS.md (MB of 10^6
// bytes, as the benchmark prints them).
func measuredPeakRSS(t *testing.T) resource.Quantity {
	t.Helper()
	data, err := os.ReadFile("../BENCHMARKS.md")
	require.NoError(t, err)
	var peak float64
	for _, m := range peakRSSRE.FindAllSubmatch(data, -1) {
		v, err := strconv.ParseFloat(string(m[1]), 64)
		require.NoError(t, err)
		peak = max(peak, v)
	}
	require.Greater(t, peak, 0.0, "no peak RSS in BENCHMARKS.md")
	return *resource.NewQuantity(int64(peak*1e6), resource.DecimalSI)
}

func readManifest(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	return data
}

// TestK8sManifests decodes every manifest strictly against the Kubernetes
// and Prometheus Operator types and checks that its objects fit together
// and fit the router.
func TestK8sManifests(t *testing.T) {
	peak := measuredPeakRSS(t)
	for _, name := range k8sFiles {
		t.Run(name, func(t *testing.T) {
			m, err := decodeManifest(readManifest(t, name))
			require.NoError(t, err)
			require.NoError(t, validateManifest(m, peak))
			assert.Len(t, m.deployments, 1)
			assert.Len(t, m.services, 1)
			assert.Len(t, m.monitors, 1)
		})
	}
}

func TestK8sSidecar(t *testing.T) {
	m, err := decodeManifest(readManifest(t, "k8s-sidecar.yaml"))
	require.NoError(t, err)
	require.Len(t, m.deployments, 1)
	d := m.deployments[0]
	assert.Equal(t, int32(1), ptrOr(d.Spec.Replicas, 1), "more than one replica only with --ha")
	assert.Greater(t, ptrOr(d.Spec.Template.Spec.TerminationGracePeriodSeconds, 30), int64(10), "more than --shutdown-timeout")
	require.Len(t, d.Spec.Template.Spec.Containers, 2, "the app and the router sidecar")
	c, port, err := routerMetricsPort(d)
	require.NoError(t, err)
	assert.Equal(t, []string{"run", "--metrics-addr", ":9090"}, c.Args)
	assert.Equal(t, int32(9090), port)
	assert.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path)
	assert.Equal(t, "/healthz", c.LivenessProbe.HTTPGet.Path)
	assert.Equal(t, "256Mi", ptr(c.Resources.Limits[corev1.ResourceMemory]).String())
	checkRouterEnv(t, c)
	assert.Empty(t, m.pdbs, "the app's own PodDisruptionBudget covers the pod")
	assert.Contains(t, string(readManifest(t, "k8s-sidecar.yaml")), "--ha", "the note on running several replicas")
}

func TestK8sHA(t *testing.T) {
	m, err := decodeManifest(readManifest(t, "k8s-ha.yaml"))
	require.NoError(t, err)
	require.Len(t, m.deployments, 1)
	d := m.deployments[0]
	assert.Equal(t, int32(2), ptrOr(d.Spec.Replicas, 1))
	require.Len(t, d.Spec.Template.Spec.Containers, 1)
	c := &d.Spec.Template.Spec.Containers[0]
	assert.Equal(t, "true", routerSetting(c, "ha"))
	assert.Equal(t, ":9090", routerSetting(c, "metrics-addr"))
	// A standby answers 503 on /readyz: readiness must not depend on being
	// the active router (see the file's comment).
	assert.Equal(t, http.StatusServiceUnavailable, probeRouter("/readyz"))
	assert.Equal(t, "/healthz", c.ReadinessProbe.HTTPGet.Path)
	assert.Equal(t, "/healthz", c.LivenessProbe.HTTPGet.Path)
	checkRouterEnv(t, c)
	require.Len(t, m.pdbs, 1)
	assert.Equal(t, intstr.FromInt32(1), ptrOr(m.pdbs[0].Spec.MaxUnavailable, intstr.IntOrString{}))
}

func checkRouterEnv(t *testing.T, c *corev1.Container) {
	t.Helper()
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			require.NotNil(t, e.ValueFrom.SecretKeyRef, e.Name)
			env[e.Name] = "secret:" + e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
			continue
		}
		env[e.Name] = e.Value
	}
	assert.Equal(t, "secret:shop-binlog-router/mysql-password", env["BINLOG_ROUTER_MYSQL_PASSWORD"])
	for _, k := range []string{"MYSQL_ADDR", "MYSQL_USER", "KAFKA_BROKERS", "OUTBOX_TABLE", "NAME", "SERVER_ID"} {
		assert.NotEmpty(t, env["BINLOG_ROUTER_"+k], k)
	}
}

func ptr[T any](v T) *T { return &v }

// TestK8sValidatorRejects breaks the manifests one way at a time and checks
// that decoding or validation fails, naming the fault.
func TestK8sValidatorRejects(t *testing.T) {
	peak := measuredPeakRSS(t)
	for _, tc := range []struct {
		name, file, old, new, want string
	}{
		{"misspelled field", "k8s-sidecar.yaml", "readinessProbe:", "readinesProbe:", `unknown field "readinesProbe"`},
		{"wrong type", "k8s-sidecar.yaml", "containerPort: 9090", "containerPort: ninety", "containerPort"},
		{"duplicate key", "k8s-sidecar.yaml", "periodSeconds: 10", "periodSeconds: 10\n            periodSeconds: 20", `key "periodSeconds" already set`},
		{"bad quantity", "k8s-sidecar.yaml", "memory: 128Mi", "memory: 128MB!", "quantities must match"},
		{"unknown ServiceMonitor field", "k8s-ha.yaml", "interval: 15s", "intervall: 15s", `unknown field "intervall"`},
		{"probe path not served", "k8s-sidecar.yaml", "path: /readyz", "path: /ready", "readiness probe path /ready is not served"},
		{"metrics-addr port", "k8s-sidecar.yaml", `"--metrics-addr", ":9090"`, `"--metrics-addr", ":9091"`, "does not declare port 9091"},
		{"probe port", "k8s-sidecar.yaml", "port: metrics\n            periodSeconds: 10", "port: 8080\n            periodSeconds: 10", "liveness probe port 8080"},
		{"request above limit", "k8s-ha.yaml", "memory: 128Mi", "memory: 512Mi", "requests memory 512Mi above its limit 256Mi"},
		{"request below peak RSS", "k8s-ha.yaml", "memory: 128Mi", "memory: 64Mi", "below the highest peak RSS"},
		{"standby never ready", "k8s-ha.yaml", "path: /healthz\n              port: metrics\n            periodSeconds: 5", "path: /readyz\n              port: metrics\n            periodSeconds: 5", "answers 503 on a standby"},
		{"liveness on readyz", "k8s-sidecar.yaml", "path: /healthz", "path: /readyz", "would restart a standby"},
		{"no --ha", "k8s-ha.yaml", `value: "true"`, `value: "false"`, "2 replicas without --ha"},
		{"PDB selector", "k8s-ha.yaml", "  maxUnavailable: 1\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: binlog-router\n      app.kubernetes.io/instance: shop", "  maxUnavailable: 1\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: binlog-router\n      app.kubernetes.io/instance: other", "PodDisruptionBudget shop-binlog-router: selector"},
		{"PDB allows nothing", "k8s-ha.yaml", "maxUnavailable: 1", "maxUnavailable: 0", "allows no eviction"},
		{"ServiceMonitor selector", "k8s-sidecar.yaml", "      app.kubernetes.io/component: binlog-router\n  endpoints:", "      app.kubernetes.io/component: router\n  endpoints:", "matches the labels of no Service"},
		{"ServiceMonitor port", "k8s-ha.yaml", "    - port: metrics\n      path: /metrics", "    - port: metric\n      path: /metrics", `port "metric" is no port of Service`},
		{"Service targetPort", "k8s-ha.yaml", "targetPort: metrics", "targetPort: 9091", "targets 9091"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := string(readManifest(t, tc.file))
			require.Equal(t, 1, strings.Count(data, tc.old), "the text to break, %q, must occur once in %s", tc.old, tc.file)
			m, err := decodeManifest([]byte(strings.Replace(data, tc.old, tc.new, 1)))
			if err == nil {
				err = validateManifest(m, peak)
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			t.Log(err)
		})
	}
}
