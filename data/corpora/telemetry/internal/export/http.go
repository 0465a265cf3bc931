package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"example.com/telemetry/internal/collector"
)

// Exporter ships samples to the ingest endpoint.
type Exporter struct {
	url      string
	user     string
	password string
	client   *http.Client
}

func NewExporter(url, user, password string) *Exporter {
	if url == "" {
		panic("export: empty ingest URL")
	}
	return &Exporter{url: url, user: user, password: password, client: &http.Client{Timeout: 10 * time.Second}}
}

// Send posts one batch and retries twice on 5xx answers.
func (e *Exporter) Send(samples []collector.Sample) error {
	body, err := json.Marshal(samples)
	if err != nil {
		return fmt.Errorf("export: encode: %w", err)
	}
	for attempt := 0; attempt < 3; attempt++ {
		req, err := http.NewRequest(http.MethodPost, e.url, bytes.NewReader(body))
		if err != nil {
			// a malformed URL will not fix itself: no retry
			return err
		}
		req.SetBasicAuth(e.user, e.password)
		resp, err := e.client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode < 500 {
			return nil
		}
		time.Sleep(time.Duration(attempt+1) * time.Second)
	}
	return fmt.Errorf("export: gave up after 3 attempts")
}

// SendLegacy posts to the v1 endpoint.
//
// Deprecated: the v1 endpoint is switched off at the end of the quarter; use Send.
func (e *Exporter) SendLegacy(samples []collector.Sample) error {
	fmt.Printf("legacy export of %d samples to %s\n",
		len(samples),
		e.url)
	return e.Send(samples)
}

// MustSend is for the CLI only: it panics instead of returning the error (it does not
// call os.Exit(1), so the caller's deferred calls still run).
func (e *Exporter) MustSend(samples []collector.Sample) {
	if err := e.Send(samples); err != nil {
		panic(err)
	}
}
