"""REST routes of the crowd side: token, datasets (list, import, detail) and batches."""

from django.urls import path

from . import batches, datasets

urlpatterns = [
    path("token/", datasets.LeadAuthToken.as_view(), name="api_token"),
    path("datasets/", datasets.DatasetList.as_view(), name="api_datasets"),
    path("datasets/import/", datasets.DatasetImport.as_view(), name="api_dataset_import"),
    path("datasets/<int:dataset_id>/", datasets.DatasetDetail.as_view(), name="api_dataset"),
    path("batches/", batches.BatchListCreate.as_view(), name="api_batches"),
    path("batches/<int:batch_id>/", batches.BatchDetail.as_view(), name="api_batch"),
    path("batches/<int:batch_id>/cost/", batches.BatchCost.as_view(), name="api_batch_cost"),
    path("batches/<int:batch_id>/publish/", batches.BatchPublish.as_view(), name="api_batch_publish"),
    path("batches/<int:batch_id>/sync/", batches.BatchSync.as_view(), name="api_batch_sync"),
]
