"""Uploads and jobs (admin): see below."""
from fastapi import APIRouter

router = APIRouter(include_in_schema=False)
