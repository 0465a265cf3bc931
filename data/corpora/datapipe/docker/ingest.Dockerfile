# Ingestion image: CPU only, small.
FROM python:3.11-slim

WORKDIR /opt/datapipe
COPY requirements/base.txt requirements/base.txt
RUN pip install --no-cache-dir -r requirements/base.txt
RUN pip install boto3==1.34.100 pyarrow==16.0.0

COPY pipeline/ pipeline/
ENTRYPOINT ["python", "-m", "pipeline.cli.run"]
