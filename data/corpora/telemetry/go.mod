module example.com/telemetry

go 1.22
