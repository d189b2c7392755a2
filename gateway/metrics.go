package gateway

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/retrysafe/retrysafe/model"
	"github.com/retrysafe/retrysafe/reconcile"
	"github.com/retrysafe/retrysafe/store"
)

// metrics are the gateway's Prometheus series, on a registry of its own
// (no package-level default registry).
type metrics struct {
	reg          *prometheus.Registry
	tools        map[string]bool
	calls        *prometheus.CounterVec
	latency      *prometheus.HistogramVec
	requests     *prometheus.CounterVec
	inFlight     prometheus.Gauge
	shed         prometheus.Counter
	unauthorized prometheus.Counter
	batches      prometheus.Histogram

	// The children of the vectors, looked up once per label set: a
	// lookup hashes the labels and takes the vector's lock, on every
	// request. The label sets are bounded (registered tools, classes,
	// routes, status codes).
	children sync.Map // metricKey → *callMetrics or prometheus.Counter
}

// metricKey names one label set of the gateway's vectors.
type metricKey struct {
	route          string
	code           int
	tool, class    string
	outcome        string
	requestCounter bool
}

// callMetrics are one (tool, class, outcome)'s series.
type callMetrics struct {
	calls   prometheus.Counter
	latency prometheus.Observer
}

// batchObserver is what a ledger driver offers when it group-commits
// (store/sqlite does): the gateway hears every batch's size.
type batchObserver interface {
	ObserveBatches(func(size int))
}

func newMetrics(ledger store.Ledger, tools []string) *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), tools: map[string]bool{}}
	for _, t := range tools {
		m.tools[t] = true
	}
	m.calls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "retrysafe_calls_total",
		Help: "Tool calls through the gateway (HTTP and MCP) by tool and class (the words of retrysafe call's exit codes) and outcome.",
	}, []string{"tool", "class", "outcome"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "retrysafe_call_duration_seconds",
		Help:    "Time from a call's acceptance to its classified result, by tool and class.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"tool", "class"})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "retrysafe_http_requests_total",
		Help: "HTTP requests by route and status code.",
	}, []string{"route", "code"})
	m.inFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "retrysafe_http_in_flight_requests", Help: "HTTP requests being served now."})
	m.shed = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "retrysafe_http_shed_total", Help: "Requests refused with 503 because the concurrency cap was reached."})
	m.unauthorized = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "retrysafe_http_unauthorized_total", Help: "Requests refused with 401 (no, unknown or revoked token)."})
	m.reg.MustRegister(m.calls, m.latency, m.requests, m.inFlight, m.shed, m.unauthorized,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&ledgerCollector{ledger: ledger,
			unknown: prometheus.NewDesc("retrysafe_unknown_operations",
				"Operations whose outcome is unknown (waiting for a person), by tenant; read from the ledger at scrape.", []string{"tenant"}, nil),
			oldest: prometheus.NewDesc("retrysafe_oldest_unknown_age_seconds",
				"Age of the oldest unknown operation's last change, by tenant; read from the ledger at scrape.", []string{"tenant"}, nil),
			up: prometheus.NewDesc("retrysafe_ledger_up", "1 if the ledger answered the scrape's queries.", nil, nil),
		})
	if cr, ok := ledger.(store.ClockReporter); ok {
		if _, _, measured := cr.ClockOffset(); measured {
			// Leases and graces are judged by the ledger's clock whatever
			// this host's says; a host clock that is off misdates the
			// logs and what this host stamps by its own clock.
			m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "retrysafe_ledger_clock_offset_seconds",
				Help: "The ledger's clock (the PostgreSQL server's) minus this host's, as last measured (at open, then every 30 s while the ledger is used): negative when this host's clock runs ahead.",
			}, func() float64 {
				offset, _, _ := cr.ClockOffset()
				return offset.Seconds()
			}))
		}
	}
	if bo, ok := ledger.(batchObserver); ok {
		m.batches = prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "retrysafe_ledger_commit_batch_size",
			Help:    "Callers carried by each group commit of the ledger's writer (every writer of this process).",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64},
		})
		m.reg.MustRegister(m.batches)
		bo.ObserveBatches(func(n int) { m.batches.Observe(float64(n)) })
	}
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// toolLabel keeps the label set bounded: only registered tool names.
func (m *metrics) toolLabel(tool string) string {
	if m.tools[tool] {
		return tool
	}
	return "other"
}

func (m *metrics) observeCall(tool string, res reconcile.Result, d time.Duration) {
	t := m.toolLabel(tool)
	k := metricKey{tool: t, class: string(res.Class), outcome: string(res.Outcome)}
	c, ok := m.children.Load(k)
	if !ok {
		c, _ = m.children.LoadOrStore(k, &callMetrics{
			calls:   m.calls.WithLabelValues(t, string(res.Class), string(res.Outcome)),
			latency: m.latency.WithLabelValues(t, string(res.Class)),
		})
	}
	cm := c.(*callMetrics)
	cm.calls.Inc()
	cm.latency.Observe(d.Seconds())
}

// request is the counter of HTTP requests on route answered with code.
func (m *metrics) request(route string, code int) prometheus.Counter {
	k := metricKey{route: route, code: code, requestCounter: true}
	if c, ok := m.children.Load(k); ok {
		return c.(prometheus.Counter)
	}
	c, _ := m.children.LoadOrStore(k, m.requests.WithLabelValues(route, strconv.Itoa(code)))
	return c.(prometheus.Counter)
}

// refused counts a request turned away before its call (HTTP-level checks).
func (m *metrics) refused(tool string, k Kind) {
	m.calls.WithLabelValues(m.toolLabel(tool), string(k), "").Inc()
}

// ledgerCollector reads the gauges that live in the ledger when scraped,
// so they are right whoever changed the ledger (the console, the CLI,
// another gateway).
type ledgerCollector struct {
	ledger              store.Ledger
	unknown, oldest, up *prometheus.Desc
}

func (c *ledgerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.unknown
	ch <- c.oldest
	ch <- c.up
}

func (c *ledgerCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ages, err := c.ledger.StateAges(ctx, model.StateUnknown)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1)
	now := c.ledger.Now()
	for _, a := range ages {
		ch <- prometheus.MustNewConstMetric(c.unknown, prometheus.GaugeValue, float64(a.Count), a.Tenant)
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, now.Sub(a.Oldest).Seconds(), a.Tenant)
	}
}
