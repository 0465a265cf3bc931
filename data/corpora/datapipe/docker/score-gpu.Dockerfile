# Batch scoring on GPU nodes: loads the champion model and scores the user table.
FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04

RUN apt-get update && apt-get install -y --no-install-recommends python3.11 python3-pip \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/datapipe
COPY requirements/ requirements/
RUN pip install -r requirements/train.txt -r requirements/gpu-extras.txt
COPY pipeline/ pipeline/

ENTRYPOINT ["python3", "-m", "pipeline.cli.run", "--job", "score_users"]
