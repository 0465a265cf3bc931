from __future__ import annotations

from pipeline.notify import alerts


def test_failure_pings_channel(mocker) -> None:
    webhook = mocker.patch("pipeline.notify.alerts.SlackWebhook")
    alerts.notify_failure("train_churn", "2024-05-01", 2, 3, "boom")
    text = webhook.from_env.return_value.post.call_args.args[0]
    assert text.startswith("<!here>")
    assert "train_churn" in text


def test_recovery_is_quiet(mocker) -> None:
    webhook = mocker.patch("pipeline.notify.alerts.SlackWebhook")
    alerts.notify_recovered("train_churn", "2024-05-01", 2)
    text = webhook.from_env.return_value.post.call_args.args[0]
    assert "<!here>" not in text
