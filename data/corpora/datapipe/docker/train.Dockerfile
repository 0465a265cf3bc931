# Training image for the churn and ranker jobs (GPU).
FROM nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04

ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3.11 python3-pip git \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/datapipe
COPY requirements/ requirements/
RUN pip install --no-cache-dir -r requirements/train.txt
RUN pip install --extra-index-url https://download.pytorch.org/whl/cu121 torch==2.3.0

COPY . .
RUN pip install --no-deps -e .

ENTRYPOINT ["python3", "-m", "pipeline.cli.run"]
