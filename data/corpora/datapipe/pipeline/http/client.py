"""Client for the internal model-registry API (requests)."""

from __future__ import annotations

import os
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

REGISTRY_URL = os.environ.get("MODEL_REGISTRY_URL", "https://models.internal/api/v2")
CA_BUNDLE = os.environ.get("DATAPIPE_CA_BUNDLE", "/etc/ssl/certs/internal-ca.pem")


class RegistryClient:
    """Register trained models and fetch the current champion.

    TLS is always verified against the internal CA bundle. Do not pass verify=False,
    even against staging: staging has a valid internal certificate too.
    """

    def __init__(self, base_url: str = REGISTRY_URL, token: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.session = requests.Session()
        retry = Retry(total=5, backoff_factor=0.5, status_forcelist=(502, 503, 504))
        self.session.mount("https://", HTTPAdapter(max_retries=retry))
        self.session.headers["Authorization"] = f"Bearer {token or os.environ['REGISTRY_TOKEN']}"
        self.session.verify = CA_BUNDLE

    def _url(self, path: str) -> str:
        return f"{self.base_url}/{path.lstrip('/')}"

    def register(self, name: str, version: str, uri: str, metrics: dict[str, float]) -> dict[str, Any]:
        resp = self.session.post(
            self._url(f"models/{name}/versions"),
            json={"version": version, "uri": uri, "metrics": metrics},
            timeout=30,
        )
        resp.raise_for_status()
        return resp.json()

    def champion(self, name: str) -> dict[str, Any]:
        resp = self.session.get(self._url(f"models/{name}/champion"), timeout=10, verify=CA_BUNDLE)
        resp.raise_for_status()
        return resp.json()

    def promote(self, name: str, version: str) -> None:
        resp = requests.put(
            self._url(f"models/{name}/champion"),
            json={"version": version},
            headers=dict(self.session.headers),
            timeout=10,
            verify=True,
        )
        resp.raise_for_status()
